// The agents test's MCP client (tests/e2e/mcp_test.sh): the official TypeScript SDK drives
// `bowline mcp` over stdio through one scenario and prints what each step answered as one
// JSON document; the shell test asserts on it.
// Usage: node mcp_agent.mjs BOWLINE TEMPLATE SPACE OTHER_TOKEN
// (BOWLINE_SERVER and BOWLINE_TOKEN in the environment: the admin's.)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bowline, template, space, otherToken] = process.argv.slice(2);
const long = { timeout: 600_000 };

async function connect(token) {
  const transport = new StdioClientTransport({
    command: bowline,
    args: ["mcp"],
    env: { ...process.env, BOWLINE_TOKEN: token },
    stderr: "inherit",
  });
  const client = new Client({ name: "bowline-e2e", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function call(client, name, args) {
  try {
    const r = await client.callTool({ name, arguments: args }, undefined, long);
    return { text: r.content.map((c) => c.text).join("\n"), isError: !!r.isError };
  } catch (e) {
    return { protocolError: String(e.message || e) };
  }
}

const out = {};
const admin = await connect(process.env.BOWLINE_TOKEN);
out.server = admin.getServerVersion();
out.tools = (await admin.listTools()).tools.map((t) => t.name);
out.create = await call(admin, "create_space", { template, name: space });
out.spaceId = /\(id ([0-9a-f-]{36})\)/.exec(out.create.text || "")?.[1];
out.stop = await call(admin, "stop_space", { space });
out.snapshot = await call(admin, "snapshot_space", { space, name: "before" });
out.restore = await call(admin, "restore_snapshot", { space, name: "before" });
out.start = await call(admin, "start_space", { space });
// The console's lines appear once the guest has printed something after its start.
for (let i = 0; i < 120; i++) {
  out.get = await call(admin, "get_space", { space });
  if (/console \(last lines\)/.test(out.get.text || "")) break;
  await new Promise((resolve) => setTimeout(resolve, 500));
}
out.list = await call(admin, "list_spaces", {});
out.run = await call(admin, "run_command", { space, command: "hostname" });
out.missingArgument = await call(admin, "snapshot_space", { space });
out.unknownTool = await call(admin, "format_disk", {});
await admin.close();

const other = await connect(otherToken);
out.otherStop = await call(other, "stop_space", { space: out.spaceId || space });
out.otherList = await call(other, "list_spaces", {});
await other.close();

process.stdout.write(JSON.stringify(out, null, 2) + "\n");
