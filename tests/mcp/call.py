#!/usr/bin/env python3
"""Call one tool of `commitea mcp` with the official MCP Python SDK and print its answer as JSON.

Usage: call.py COMMITEA_BINARY STATE_DIR TOOL JSON_INPUT [--by USER]

The server inherits this process's environment (the token, COMMITEA_SERVER). Exits 1 when the tool
answers an error, printing it on stderr. `tests/it/approvals.rs` uses it to start the approval loop
the way an agent would.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main() -> int:
    binary, state, tool, raw = sys.argv[1:5]
    args = ["mcp", "-s", state] + sys.argv[5:]
    import os

    params = StdioServerParameters(command=binary, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(tool, json.loads(raw))
            text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
            if result.is_error:
                print(text, file=sys.stderr)
                return 1
            print(json.dumps(result.structured_content if result.structured_content is not None else json.loads(text)))
            return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
