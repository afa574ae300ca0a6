"""The drawing modules of the dashboard: figures, tables and texts from sgi_core results; they call no service."""
