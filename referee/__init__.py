"""referee: runs competitions of Stop the Bus and Bastard Brag between bots in any language."""

__version__ = "0.1.0"

import os as _os

# grpcio's fork support breaks child processes started by the referee; it
# must be off before grpc is first imported.
_os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
