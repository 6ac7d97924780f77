#!/usr/bin/env python3
"""Drive `commitea mcp` with the official MCP Python SDK (`pip install 'mcp==2.3.0'`).

Usage: client.py COMMITEA_BINARY STATE_DIR

Starts the server on the state repo, initializes, lists the tools, calls query_project with each of the
nine views, files an additive apply_changes op, and checks that errors (input out of range, an unknown
tool, capture_work without a model, an unknown JSON-RPC method) come back as errors while the session goes
on. Prints a JSON summary on stdout; exits 1 if any check failed. `tests/it/mcp.rs` runs it.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, MCPError, StdioServerParameters, types
from mcp.client.stdio import stdio_client

TOOLS = ["query_project", "capture_work", "apply_changes", "record_directive"]
VIEWS = ["focus", "issue", "milestone", "board", "runway", "calibration", "directives", "standup", "search"]

failures: list[str] = []


def check(ok: bool, what: str) -> bool:
    """Records a failed check; returns `ok`."""
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}", file=sys.stderr)
    return ok


def text_of(result: types.CallToolResult) -> str:
    """The first text content of a tool result."""
    for block in result.content:
        if isinstance(block, types.TextContent):
            return block.text
    return ""


async def answer(session: ClientSession, name: str, arguments: dict) -> dict | None:
    """Calls a tool that should succeed; its structured answer, which must equal its text content."""
    result = await session.call_tool(name, arguments)
    if not check(not result.is_error, f"{name} {json.dumps(arguments)} failed: {text_of(result)}"):
        return None
    data = result.structured_content
    check(isinstance(data, dict), f"{name}: structured content is an object")
    check(json.loads(text_of(result)) == data, f"{name}: text content is the structured content as JSON")
    return data


async def error(session: ClientSession, name: str, arguments: dict) -> tuple[str, dict]:
    """Calls a tool that should fail; the error's text and structured `error` object."""
    result = await session.call_tool(name, arguments)
    check(result.is_error is True, f"{name} {json.dumps(arguments)} should be an error result")
    structured = result.structured_content or {}
    check("error" in structured, f"{name}: an error result carries {{error: ...}}")
    return text_of(result), structured.get("error", {})


async def run(binary: str, state: Path) -> dict:
    summary: dict = {}
    params = StdioServerParameters(
        command=binary,
        args=["mcp", "-s", str(state), "--by", "mcp-client"],
        # COMMITEA_FORECAST_TRIALS and friends reach the server.
        env={k: v for k, v in os.environ.items() if k.startswith("COMMITEA_")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            summary["server"] = {
                "name": init.server_info.name,
                "version": init.server_info.version,
                "protocolVersion": init.protocol_version,
            }
            check(init.server_info.name == "commitea", "the server is called commitea")
            check(init.capabilities.tools is not None, "the server offers tools")
            check(bool(init.instructions) and "query_project" in init.instructions, "instructions name the tools")

            listed = await session.list_tools()
            names = [t.name for t in listed.tools]
            summary["tools"] = names
            check(names == TOOLS, f"tools/list offers the four tools, got {names}")
            for t in listed.tools:
                check(t.input_schema.get("type") == "object", f"{t.name}: inputSchema is of type object")
                check(
                    t.output_schema is not None and t.output_schema.get("type") == "object",
                    f"{t.name}: outputSchema is of type object",
                )
                check(bool(t.description), f"{t.name}: has a description")

            # Ids that exist in the state, from the views that list them.
            board = await answer(session, "query_project", {"view": "board", "filters": {"state": "steeping"}})
            runway = await answer(session, "query_project", {"view": "runway"})
            issue = next(
                (i for c in (board or {}).get("columns", []) for i in c.get("issues", [])),
                {},
            )
            milestone = ((runway or {}).get("milestones") or [{}])[0].get("milestone")
            check(bool(issue.get("issue")), "the board lists a steeping issue")
            check(milestone is not None, "the runway lists a milestone")
            word = max(issue.get("title", "x").split(), key=len)
            summary["picked"] = {"issue": issue.get("issue"), "milestone": milestone, "query": word}

            filters = {
                "issue": {"issueId": issue.get("issue")},
                "milestone": {"milestoneId": milestone},
                "search": {"query": word},
            }
            views = {}
            for view in VIEWS:
                args = {"view": view}
                if view in filters:
                    args["filters"] = filters[view]
                data = await answer(session, "query_project", args)
                views[view] = sorted(data) if data is not None else None
            summary["views"] = views
            search = await answer(session, "query_project", {"view": "search", "filters": {"query": word}})
            check(
                any(m.get("issue") == issue.get("issue") for m in (search or {}).get("matches", [])),
                f"searching {word!r} finds {issue.get('issue')}",
            )

            # An additive op is applied: one op file under ops/pending/.
            priority = "p/3" if issue.get("priority") != "p/3" else "p/2"
            applied = await answer(
                session,
                "apply_changes",
                {"ops": [{"op": "set_priority", "issue": issue.get("issue"), "priority": priority}]},
            )
            applied = applied or {}
            summary["apply"] = applied
            check(applied.get("applied") == 1, f"apply_changes applied 1 op: {applied}")
            ops_file = applied.get("opsFile")
            check(bool(ops_file) and (state / ops_file).is_file(), f"the op file {ops_file} was written")
            if ops_file and (state / ops_file).is_file():
                check("mcp-client" in (state / ops_file).read_text(), "the op file says who asked (--by)")

            directive = await answer(
                session,
                "record_directive",
                {"kind": "note", "quote": "The MCP client test was here.", "by": "mcp-client"},
            )
            summary["directive"] = (directive or {}).get("directiveId")
            check(bool(summary["directive"]), "record_directive answers a directive id")

            # A bad input is an error result naming the field, and the session goes on.
            message, err = await error(
                session, "query_project", {"view": "runway", "filters": {"limit": 500}}
            )
            summary["badInput"] = {"message": message, "path": err.get("path"), "kind": err.get("kind")}
            check(err.get("path") == "/filters/limit", f"the error names /filters/limit: {err}")
            check("/filters/limit" in message, "the error text names /filters/limit")
            after = await answer(session, "query_project", {"view": "calibration"})
            summary["afterError"] = after is not None

            message, err = await error(session, "no_such_tool", {})
            summary["unknownTool"] = err.get("kind")
            check(err.get("kind") == "unknown_tool", f"an unknown tool is kind unknown_tool: {err}")

            message, err = await error(session, "capture_work", {"braindump": "a login page, soon"})
            summary["captureWork"] = err.get("kind")
            check("no model configured" in message, f"capture_work says no model is configured: {message}")

            # An unknown JSON-RPC method is the standard method-not-found error.
            try:
                await session.send_request(types.Request(method="no/such", params={}), types.EmptyResult)
                check(False, "an unknown method should be an error")
                summary["methodNotFound"] = None
            except MCPError as e:
                summary["methodNotFound"] = e.code
                check(e.code == -32601, f"an unknown method is -32601, got {e.code}: {e}")

            final = await answer(session, "query_project", {"view": "focus", "filters": {"limit": 3}})
            summary["stillWorks"] = final is not None
    return summary


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, state = sys.argv[1], Path(sys.argv[2])
    try:
        summary = asyncio.run(run(binary, state))
    except Exception as e:  # noqa: BLE001 - any crash is a failed run, reported in the summary
        failures.append(f"the session crashed: {type(e).__name__}: {e}")
        summary = {}
    summary["failures"] = failures
    print(json.dumps(summary))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
