"""The drawing modules of the dashboard: figures, tables and texts laid out from sgi_core results; they call no service."""
