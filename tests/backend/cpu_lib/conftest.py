import sys
from pathlib import Path

# make the shared harness importable whatever pytest's import mode is
sys.path.insert(0, str(Path(__file__).parent))
