"""The official MCP Python SDK as a real client of tldsnap's /mcp (run by tests/mcp.rs).

Given a plan (JSON: the endpoint's URL, keys, and per tool call the arguments and the
REST answer for the same key), it connects over Streamable HTTP, initializes, lists the
tools, calls each with its arguments and checks that the parsed structured result
equals the REST answer (the SDK validates it against the tool's output schema too);
reads the resources (the registrar list, TLD overviews) and checks them against REST
too, and gets a prompt; then that a free key is refused a paid TLD with the REST problem, and that a key's
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
                # Resources: listed, the template listed, each read the REST answer.
                resources = await session.list_resources()
                uris = [str(r.uri) for r in resources.resources]
                templates = await session.list_resource_templates()
                listed_templates = getattr(templates, "resource_templates", None) or templates.resourceTemplates
                patterns = [getattr(t, "uri_template", None) or t.uriTemplate for t in listed_templates]
                if uris != ["tldsnap://registrars"] or patterns != ["tldsnap://tld/{tld}"]:
                    failures.append(f"resources {uris}, templates {patterns}")
                for read in plan["reads"]:
                    got = await session.read_resource(read["uri"])
                    text = got.contents[0].text
                    if masked(json.loads(text)) != read["rest"]:
                        failures.append(f"{read['uri']}: differs from REST")
                    else:
                        print("ok read", read["uri"])
                # Prompts: listed, one filled in.
                prompts = await session.list_prompts()
                names = [p.name for p in prompts.prompts]
                prompt = await session.get_prompt("compare_registrars", {"tld": "dev", "years": "3"})
                text = prompt.messages[0].content.text
                if names != ["compare_registrars", "audit_portfolio"] or ".dev" not in text or "3 years" not in text:
                    failures.append(f"prompts {names}: {text!r}")
                else:
                    print("ok prompts:", ", ".join(names))

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
