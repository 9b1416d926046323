"""The Dask client process imports Dask the cheaper way (see
:mod:`podnuma.fleet.daskimport`) and leaves the interpreter as it was."""

from __future__ import annotations

import subprocess
import sys

from .conftest import need

_CODE = """
import gc, sys, yaml
plain = yaml.safe_load
from podnuma.fleet.daskimport import import_dask
assert not {'distributed', 'numpy', 'jinja2'} & set(sys.modules)
import_dask(freeze=True, lean=True)
import dask, distributed
from distributed.protocol.utils import host_array
assert 'numpy' not in sys.modules, 'numpy imported'
assert 'jinja2' not in sys.modules, 'jinja2 imported'
assert isinstance(host_array(8).obj, bytearray)  # Dask's own way without numpy
from dask.widgets import get_template
try:  # Dask's own way without Jinja2: no notebook HTML
    get_template('client.html.j2')
except ImportError:
    pass
else:
    raise AssertionError('a template without jinja2')
assert yaml.safe_load is plain and gc.isenabled() and gc.get_freeze_count() > 0
assert isinstance(dask.config.get('distributed.scheduler.allowed-failures'), int)  # its settings read
import numpy, jinja2  # still there for whoever needs them
print('ok', numpy.__name__, jinja2.__name__)
"""


def test_the_client_process_imports_dask_without_numpy_or_jinja2_and_leaves_the_rest_as_it_was() -> None:
    need("distributed")
    out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok", "numpy", "jinja2"]
