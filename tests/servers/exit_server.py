"""A stdio "server" that fails at once, explaining why on stderr, as real ones do."""

import sys

sys.stderr.write(f"exit_server: starting {' '.join(sys.argv[1:])}\n")
sys.stderr.write("Error: GITHUB_TOKEN is not set\n")
sys.exit(3)
