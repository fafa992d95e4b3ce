"""referee: runs competitions of Stop the Bus and Bastard Brag between bots in any language."""

__version__ = "0.1.0"
