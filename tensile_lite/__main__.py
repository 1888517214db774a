from tensile_lite.cli import main

raise SystemExit(main())
