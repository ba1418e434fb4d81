"""The official MCP Python SDK as a real client of tldsnap's /mcp (run by tests/mcp.rs).

Given a plan (JSON: the endpoint's URL, keys, and per tool call the arguments and the
REST answer for the same key), it connects over Streamable HTTP, initializes, lists the
tools, calls each with its arguments and checks that the parsed structured result
equals the REST answer (the SDK validates it against the tool's output schema too);
then that a free key is refused a paid TLD with the REST problem, and that a key's
credits run out across calls as they do over REST. Prints "all checks passed".
"""

import asyncio
import json
import re
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def masked(value):
    """`value` with every `time_elapsed` masked, as the Rust side masks it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.loads(re.sub(r'"time_elapsed":"[^"]*"', '"time_elapsed":"<masked>"', text))


def structured(result):
    return getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)


def is_error(result):
    value = getattr(result, "is_error", None)
    return getattr(result, "isError", False) if value is None else value


async def run(plan):
    failures = []
    url = plan["url"]
    async with create_mcp_http_client(headers={"X-API-Key": plan["key"]}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                print("negotiated", init.protocol_version if hasattr(init, "protocol_version") else init.protocolVersion)
                listed = await session.list_tools()
                names = [t.name for t in listed.tools]
                print("tools:", ", ".join(names))
                for tool in listed.tools:
                    annotations = tool.annotations
                    read_only = getattr(annotations, "read_only_hint", None)
                    if read_only is None:
                        read_only = getattr(annotations, "readOnlyHint", None)
                    if read_only is not True:
                        failures.append(f"{tool.name}: readOnlyHint is {read_only!r}")
                for case in plan["calls"]:
                    result = await session.call_tool(case["tool"], case["arguments"])
                    if is_error(result):
                        failures.append(f"{case['tool']}: isError {result}")
                        continue
                    got = masked(structured(result))
                    if got != case["rest"]:
                        failures.append(f"{case['tool']} {case['arguments']}: structured result differs from REST")
                    else:
                        print("ok", case["tool"], json.dumps(case["arguments"], ensure_ascii=False))

    # A free key is refused a paid TLD, with the REST problem.
    async with create_mcp_http_client(headers={"X-API-Key": plan["free_key"]}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("cheapest", {"tlds": "club"})
                if not is_error(result) or structured(result) != plan["refused"]:
                    failures.append(f"free key, paid TLD: {result}")
                else:
                    print("ok free key refused:", result.content[0].text)

    # Credits move: the tiny plan has two a month.
    async with create_mcp_http_client(headers={"Authorization": "Bearer " + plan["tiny_key"]}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                seen = []
                for _ in range(3):
                    result = await session.call_tool("cheapest", {"tlds": "com"})
                    meta = getattr(result, "meta", None) or {}
                    seen.append((is_error(result), meta.get("tldsnap.dev/x-credits-remaining")))
                codes = [s[0] for s in seen]
                if codes != [False, False, True]:
                    failures.append(f"tiny plan's calls: {seen}")
                else:
                    print("ok credits:", seen)

    if failures:
        print("FAILED:\n" + "\n".join(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    sys.exit(asyncio.run(run(plan)))
