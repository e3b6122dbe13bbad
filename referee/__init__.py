"""The referee: game engines, the match loop, clocks and fault policy."""
