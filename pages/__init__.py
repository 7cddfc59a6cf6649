"""The dashboard's pages; ``common`` holds the helpers they share (state, data, guarded engine calls, controls)."""
