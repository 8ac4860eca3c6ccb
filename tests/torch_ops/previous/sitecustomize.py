"""A sitecustomize the environment already had: --torch-ops' hook shadows it and must run it."""
import sys

sys.stderr.write("previous sitecustomize ran\n")
