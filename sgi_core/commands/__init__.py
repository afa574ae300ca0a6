"""The subcommands of ``python -m sgi_core``, one module each.

Every module has ``add_parser(subparsers)``, which registers the subcommand and its
options (``set_defaults(func=run)``), and ``run(args) -> int``, the exit status.
:mod:`sgi_core.cli` lists the modules; a new subcommand is a new module and one entry
in that list. Modules import the library's heavy parts inside ``run``, so that building
the parser for one command does not load what another needs.
"""
