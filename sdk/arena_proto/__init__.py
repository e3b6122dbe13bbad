"""Generated protocol code (proto/generate.py); do not edit."""
