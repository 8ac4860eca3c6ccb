"""A PyTorch-style script, unchanged for --torch-ops: prints what it saw."""
import sys

print("torch before import:", "torch" in sys.modules)
if len(sys.argv) < 2 or sys.argv[1] != "no-torch":
    import torch

    print("torch imported:", torch.__name__)
print("torch at exit:", "torch" in sys.modules)
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
