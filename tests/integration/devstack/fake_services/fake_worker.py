"""A stand-in service that leaves a grandchild in its process group, as real ones might."""

import os
import subprocess
import sys
import time
from pathlib import Path

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
Path(os.environ["FAKE_WORKER_CHILD_PIDS"]).open("a").write(f"{child.pid}\n")
while True:
    time.sleep(1)
