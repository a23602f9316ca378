"""MCP server over the workspace index: search, cited answers and outlines for coding agents.

Layer: beside `server/` and `cli/`; imports the engine and below, never `server/` or LSP
types. `service` is the plain domain core (`CodeService`), `server` the thin protocol layer
(the official `mcp` SDK), `freshness` keeps the shared on-disk index in step with the tree,
`paths` confines arguments to the root, `results` bounds what goes back to the agent.
"""
