from sgi_core.cli import main

raise SystemExit(main())
