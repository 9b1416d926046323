"""Every file or stream podnuma reads (documents, node discovery, pod and workload files, checkpoints, stdin) and every field-path error, in one wording."""
