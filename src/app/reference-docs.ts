import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType, isUnionType, type GraphQLArgument, type GraphQLField, type GraphQLInputField, type GraphQLNamedType } from "graphql";
import { CONFIG_AREAS } from "../config/config.js";
import { schemaDefault } from "../config/variable.js";
import { ERROR_CATALOGUE } from "../errors/app-error.js";

/**
 * The generated references of docs/reference/ (configuration.md, errors.md, graphql.md), each
 * from the code it documents: the configuration areas, the error catalogue, schema.graphql.
 * `npm run docs:write` writes them; `npm run docs:check` and test/reference-docs.test.ts fail
 * when a committed file is stale.
 */

const GENERATED = (source: string) => `<!-- Generated from ${source} by \`npm run docs:write\`; edit the source, not this file. -->`;

/** A table cell: one line, pipes escaped. */
const cell = (text: string) => text.replace(/\r?\n\s*/g, " ").replace(/\|/g, "\\|").trim();
const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9 -]/g, "").trim().replace(/ +/g, "-");

export function configurationReference(): string {
  const out = [
    GENERATED("src/config/areas/*.ts"),
    "",
    "# Configuration reference",
    "",
    "Agent Gateway is configured by environment variables only. Every process (`npm start`, `npm run serve`,",
    "`npm run worker`, the admin CLI) reads and validates them at start; a bad value stops the process with",
    "a message that names the variable (secret values are never echoed). An empty value counts as unset.",
    "Production (`NODE_ENV=production`) requires `OPERATOR_TOKEN`, `SECRET_ENCRYPTION_KEY`, an `https://`",
    "`PUBLIC_BASE_URL` and the provider keys; see docs/operations/production.md.",
    "",
    ...CONFIG_AREAS.map((a) => `- [${a.title}](#${slug(a.title)})`),
  ];
  for (const a of CONFIG_AREAS) {
    out.push("", `## ${a.title}`, "", a.intro, "", "| Variable | Default | Meaning |", "|---|---|---|");
    for (const [name, v] of Object.entries(a.variables)) {
      const d = schemaDefault(v.schema);
      const shown = v.shownDefault ?? (d === undefined ? "unset" : `\`${String(d)}\``);
      out.push(`| \`${name}\` | ${cell(shown)} | ${cell(v.description)} |`);
    }
  }
  return out.join("\n") + "\n";
}

export function errorsReference(): string {
  const out = [
    GENERATED("src/errors/app-error.ts"),
    "",
    "# Error reference",
    "",
    "Every error the gateway answers has one code from this table, the same on every surface:",
    "",
    "- REST routes outside `/api/v1/`: HTTP status and `{\"error\": {\"code\", \"message\", ...}}`; some codes add fields (a job's `status`, a webhook refusal's `reason`).",
    "- The OpenAI-compatible API (`/api/v1/`): HTTP status and OpenAI's `{\"error\": {\"message\", \"type\", \"code\", \"param\"}}`, so the official SDKs raise their typed errors.",
    "- GraphQL: an error whose `extensions.code` is the GraphQL code below and `extensions.reason` the gateway's code (with `param` and the code's extra fields).",
    "- A2A and MCP: the protocol's own error (JSON-RPC, `google.rpc.Status`) carrying the HTTP status and the code in its data (docs/guides/a2a.md, docs/guides/mcp.md).",
    "",
    "The REST routes and the statuses each one answers are in the OpenAPI document (docs/reference/rest.md).",
    "",
    "| Code | HTTP | GraphQL | Meaning | What to do |",
    "|---|---|---|---|---|",
  ];
  for (const [code, e] of Object.entries(ERROR_CATALOGUE)) out.push(`| \`${code}\` | ${e.status} | \`${e.graphql}\` | ${cell(e.meaning)} | ${cell(e.action)} |`);
  return out.join("\n") + "\n";
}

const argsOf = (args: readonly GraphQLArgument[] | readonly GraphQLInputField[]) => args.map((a) => `${a.name}: ${String(a.type)}`).join(", ");

function fieldTable(fields: readonly (GraphQLField<unknown, unknown> | GraphQLInputField)[], heading: string): string[] {
  if (!fields.length) return [];
  const rows = fields.map((f) => {
    const args = "args" in f && f.args.length ? `(${argsOf(f.args)})` : "";
    const deprecated = f.deprecationReason ? ` **Deprecated:** ${f.deprecationReason}` : "";
    return `| \`${f.name}${cell(args)}\` | \`${String(f.type)}\` | ${cell((f.description ?? "") + deprecated)} |`;
  });
  return [`| ${heading} | Type | Description |`, "|---|---|---|", ...rows];
}

function operations(title: string, type: { getFields(): Record<string, GraphQLField<unknown, unknown>> } | null | undefined): string[] {
  if (!type) return [];
  const out = ["", `## ${title}`];
  for (const f of Object.values(type.getFields()).sort((a, b) => a.name.localeCompare(b.name))) {
    out.push("", `### \`${f.name}\``, "", "```graphql", `${f.name}${f.args.length ? `(${argsOf(f.args)})` : ""}: ${String(f.type)}`, "```");
    if (f.description) out.push("", f.description);
    if (f.deprecationReason) out.push("", `**Deprecated:** ${f.deprecationReason}`);
    if (f.args.length) out.push("", "| Argument | Type | Description |", "|---|---|---|", ...f.args.map((a) => `| \`${a.name}\` | \`${String(a.type)}\` | ${cell(a.description ?? "")} |`));
  }
  return out;
}

function kindOf(t: GraphQLNamedType): string {
  if (isObjectType(t)) return "object";
  if (isInputObjectType(t)) return "input";
  if (isEnumType(t)) return "enum";
  if (isInterfaceType(t)) return "interface";
  if (isUnionType(t)) return "union";
  return "scalar";
}

export function graphqlReference(sdl: string): string {
  const schema = buildSchema(sdl);
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean).map((t) => t!.name));
  const out = [
    GENERATED("schema.graphql"),
    "",
    "# GraphQL reference",
    "",
    "The management API: `POST /graphql` (queries, mutations) and graphql-ws on the same path (subscriptions),",
    "with `Authorization: Bearer <admin token>` (`adm_…`), or the operator token for operator mutations.",
    "How to use it, with examples: docs/guides/graphql.md. Error codes: docs/reference/errors.md.",
    "",
    "- [Queries](#queries)",
    "- [Mutations](#mutations)",
    "- [Subscriptions](#subscriptions)",
    "- [Types](#types)",
    ...operations("Queries", schema.getQueryType()),
    ...operations("Mutations", schema.getMutationType()),
    ...operations("Subscriptions", schema.getSubscriptionType()),
    "",
    "## Types",
  ];
  const types = Object.values(schema.getTypeMap())
    .filter((t) => !t.name.startsWith("__") && !roots.has(t.name) && !(isScalarType(t) && ["String", "Int", "Float", "Boolean", "ID"].includes(t.name)))
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const t of types) {
    out.push("", `### \`${t.name}\` (${kindOf(t)})`);
    if (t.description) out.push("", t.description);
    if (isObjectType(t) || isInterfaceType(t)) out.push("", ...fieldTable(Object.values(t.getFields()), "Field"));
    else if (isInputObjectType(t)) out.push("", ...fieldTable(Object.values(t.getFields()), "Field"));
    else if (isEnumType(t)) out.push("", "| Value | Description |", "|---|---|", ...t.getValues().map((v) => `| \`${v.name}\` | ${cell((v.description ?? "") + (v.deprecationReason ? ` **Deprecated:** ${v.deprecationReason}` : ""))} |`));
    else if (isUnionType(t)) out.push("", `One of: ${t.getTypes().map((m) => `\`${m.name}\``).join(", ")}.`);
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n") + "\n";
}
