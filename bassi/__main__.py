from bassi.cli import main

raise SystemExit(main())
