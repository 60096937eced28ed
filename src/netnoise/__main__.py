import sys

from netnoise.cli import main

sys.exit(main())
