"""The service layer: one typed function per question a user asks.

Each function takes inputs (:class:`~podnuma.inputs.text.TextInput`: text
plus its name, or the few plain values a question needs) and options, and
returns the result document (the ``-o json`` output) or a typed result the
doors render. The command line (:mod:`podnuma.cli`) and the web API
(:mod:`podnuma.web`) call the same function for the same question, so they
cannot drift; a new question is a function here and a few lines per door.

============================  ===============================================
question                      function
============================  ===============================================
simulate a scenario           :func:`podnuma.service.scenario.run`, ``simulate``
the embedded demo             :func:`podnuma.service.scenario.demo`
explain admissions            :func:`podnuma.service.explain.explain`
the topology picture          :func:`podnuma.service.scenario.topology`
compare pod forms             :func:`podnuma.service.whatif.compare`
advise the pod-level rewrite  :func:`podnuma.service.whatif.advise`
what-if from a web request    :func:`podnuma.service.whatif.whatif_request`
discover this node            :func:`podnuma.service.machine.discover`
inspect kubelet state         :func:`podnuma.service.state.inspect`
a kubelet restart             :func:`podnuma.service.restart.restart_after_scenario`, ``restart_state_dir``
plan / apply cgroups          :func:`podnuma.service.cgroups.plan`, ``apply``
fleet analyze / generate      :func:`podnuma.service.fleet.analyze`, ``generate``
draw a fleet report           :func:`podnuma.service.fleet.report_html`
messages and version          :mod:`podnuma.service.messages`
============================  ===============================================
"""
