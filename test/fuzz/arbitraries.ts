import fc from "fast-check";
import { SUPPORTED_MODELS } from "../../src/config/models.js";

/** Generators of malformed and hostile requests, shared by the fuzz properties. */

export const oddString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\ud800",
    "\udfff",
    "a\ud83d",
    "\u202e\u200b\ufeff",
    "𝕏🙂👨‍👩‍👧",
    "%00%ff",
    "../../../etc/passwd",
    "' or 1=1 --",
    "<script>alert(1)</script>",
    "${process.env}",
    "__proto__",
    "constructor",
    "\r\nX-Injected: 1",
    "x".repeat(5000),
  ),
);

/** Any JSON value, with odd strings and keys such as __proto__. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(Number.MAX_SAFE_INTEGER, -0, 1e308, -1),
    oddString,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(oddString, fc.constantFrom("__proto__", "constructor", "prototype")), tie("v"), { maxKeys: 4 }),
  ),
})).v;

/** A body as bytes on the wire: JSON of anything, broken JSON, deep nesting, huge strings, invalid UTF-8. */
export const bodyText: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { arbitrary: jsonValue.map((v) => JSON.stringify(v) ?? "null"), weight: 6 },
  { arbitrary: jsonValue.map((v) => (JSON.stringify(v) ?? "null").slice(0, -1)), weight: 1 },
  { arbitrary: oddString, weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 20_000 }).map((d) => "[".repeat(d) + "]".repeat(d)), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 20_000 }).map((d) => '{"a":'.repeat(d) + "0" + "}".repeat(d)), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 1_100_000 }).map((n) => JSON.stringify({ s: "é".repeat(Math.floor(n / 2)) })), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 200 }), weight: 1 },
  { arbitrary: fc.constantFrom('{"a":"\\ud800"}', '{"a":"\\u0000"}', '{"\\udfff":1}', "\ufeff{}", '{"a":1,"a":2}', "1e999", "-0", '"\\'), weight: 1 },
);

export const contentType = fc.oneof(
  { arbitrary: fc.constant("application/json"), weight: 8 },
  {
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "application/vnd.api+json",
      "application/json; charset=latin1",
      "text/plain",
      "multipart/form-data; boundary=x",
      "application/x-www-form-urlencoded",
      "",
      "application/json, text/plain",
      "APPLICATION/JSON",
    ),
    weight: 3,
  },
  { arbitrary: oddString.filter((s) => /^[\t\x20-\x7e]*$/.test(s)), weight: 1 },
);

/** A header value Node's client will send (visible ASCII and tabs only). */
export const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 }),
  fc.constantFrom("", " ", "Bearer", "Bearer  ", "bearer x y", "Basic Zm9vOmJhcg==", "sha256=", "v1,", "v1,AAAA v2,BBBB", "0", "-1", "99999999999999999999", "1e3"),
);

export const modelId = fc.oneof(fc.constantFrom(...SUPPORTED_MODELS), oddString, fc.constantFrom("provider_a/", "gpt-4o", "provider_b/../x"));

const message = fc.oneof(
  fc.record({ role: fc.constantFrom("system", "user", "assistant", "tool", "developer"), content: fc.oneof(oddString, jsonValue) }, { requiredKeys: [] }),
  fc.record({
    role: fc.oneof(fc.constantFrom("user", "assistant"), oddString),
    content: fc.array(fc.record({ type: fc.oneof(fc.constantFrom("text", "image_url", "input_audio", "file"), oddString), text: jsonValue, image_url: jsonValue }, { requiredKeys: [] }), { maxLength: 3 }),
    tool_calls: jsonValue,
    name: jsonValue,
  }, { requiredKeys: ["role"] }),
  jsonValue,
);

/** A chat completions body: the right shape with wrong values, or anything. */
export const chatBody = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        model: modelId,
        messages: fc.oneof(fc.array(message, { maxLength: 4 }), jsonValue),
        stream: fc.oneof(fc.boolean(), jsonValue),
        stream_options: fc.oneof(fc.record({ include_usage: fc.oneof(fc.boolean(), jsonValue) }), jsonValue),
        temperature: fc.oneof(fc.double(), jsonValue),
        top_p: jsonValue,
        max_tokens: fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 31, 1e20), jsonValue),
        max_completion_tokens: jsonValue,
        stop: jsonValue,
        n: jsonValue,
        user: jsonValue,
        thread_id: fc.oneof(oddString, fc.constantFrom("thr_nope", "thr_"), jsonValue),
        tools: jsonValue,
        tool_choice: jsonValue,
        response_format: fc.oneof(fc.record({ type: fc.constantFrom("json_object", "json_schema", "text"), json_schema: jsonValue }, { requiredKeys: [] }), jsonValue),
      },
      { requiredKeys: [] },
    ).map((b) => JSON.stringify(b)),
  },
  { weight: 1, arbitrary: bodyText },
);

/** A Responses API body (POST /api/v1/responses). */
export const responsesBody = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record(
        {
          model: modelId,
          input: fc.oneof(oddString, fc.array(message, { maxLength: 3 }), jsonValue),
          instructions: jsonValue,
          previous_response_id: fc.oneof(oddString, jsonValue),
          stream: fc.oneof(fc.boolean(), jsonValue),
          store: jsonValue,
          tools: jsonValue,
          text: jsonValue,
        },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b)),
  },
  { weight: 1, arbitrary: bodyText },
);

/** A GraphQL operation built from real and unknown fields: depth, width, aliases, fragments, variables. */
const FIELDS = ["me", "agents", "triggers", "jobs", "job", "trigger", "agent", "thread", "threads", "usage", "ledger", "apiKeys", "__typename", "__schema", "__type", "nope"];
const SUB = ["id", "name", "balance", "status", "error", "logs", "result", "secret", "triggers", "agent", "apiKeys", "edges", "node", "pageInfo", "__typename", "nope", "cost"];
const selection: fc.Arbitrary<string> = fc.letrec<{ sel: string }>((tie) => ({
  sel: fc
    .array(
      fc.tuple(fc.option(fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,6}$/)), fc.constantFrom(...SUB), fc.option(fc.constantFrom("(first: 1)", "(first: -1)", '(id: "x")', "(first: $n)", "(id: $id)", '(filter: { status: DONE })', "(bogus: 1)")), fc.option(tie("sel"), { freq: 3 })),
      { minLength: 1, maxLength: 5 },
    )
    .map((fields) => `{ ${fields.map(([alias, f, args, sub]) => `${alias ? `${alias}: ` : ""}${f}${args ?? ""}${sub ? ` ${sub}` : ""}`).join(" ")} }`),
})).sel;

export const graphqlOperation = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({
        kind: fc.constantFrom("query", "mutation", "subscription", ""),
        top: fc.array(fc.tuple(fc.option(fc.stringMatching(/^[a-z]{1,5}$/)), fc.constantFrom(...FIELDS), fc.option(fc.constantFrom('(id: "acc_x")', "(id: $id)", "(first: $n)", "(first: 100000)")), fc.option(selection)), { minLength: 1, maxLength: 4 }),
        vars: fc.option(fc.constantFrom("($id: ID, $n: Int)", "($id: ID!)", "($n: Int!, $x: JSON)", "($x: Nope)")),
      })
      .map(({ kind, top, vars }) => `${kind}${kind && vars ? ` q${vars}` : ""} { ${top.map(([a, f, args, sel]) => `${a ? `${a}: ` : ""}${f}${args ?? ""}${sel ? ` ${sel}` : ""}`).join(" ")} }`),
  },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 3000 }).map((d) => `{ me ${"{ agents ".repeat(d)}${"}".repeat(d)} }`) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 3000 }).map((w) => `{ ${Array.from({ length: w }, (_, i) => `a${i}: me { id }`).join(" ")} }`) },
  { weight: 1, arbitrary: fc.constantFrom("fragment F on Account { ...F } { me { ...F } }", "{ me { ...on Nope { id } } }", "query { __schema { types { fields { type { ofType { ofType { name } } } } } } }", "{", "}", "query($a: Int = \"x\") { me { id } }", "{ me @skip(if: $x) { id } }") },
  { weight: 1, arbitrary: oddString },
);

export const graphqlBody = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record(
        { query: fc.oneof(graphqlOperation, jsonValue), variables: fc.oneof(fc.dictionary(fc.constantFrom("id", "n", "x", "input", "p"), jsonValue), jsonValue), operationName: fc.oneof(fc.constantFrom("q", null), jsonValue), extensions: jsonValue },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b)),
  },
  { weight: 1, arbitrary: fc.array(fc.record({ query: graphqlOperation }), { maxLength: 3 }).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: bodyText },
);

const A2A_METHODS = [
  "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask", "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard",
  "message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe", "tasks/pushNotificationConfig/set", "agent/getAuthenticatedExtendedCard",
];

/** An A2A part in either version's shape, or anything; `big` makes an oversized text part. */
const a2aPart = fc.oneof(
  { weight: 4, arbitrary: fc.record({ text: oddString }).map((p) => ({ ...p, kind: "text" })) },
  { weight: 2, arbitrary: fc.record({ data: jsonValue }).map((p) => ({ ...p, kind: "data" })) },
  { weight: 1, arbitrary: fc.record({ url: oddString, mediaType: fc.constantFrom("image/png", "application/pdf", "", "image/") }) },
  { weight: 1, arbitrary: fc.record({ raw: fc.constantFrom("aGVsbG8=", "not base64", ""), mediaType: fc.constantFrom("image/png", "text/plain") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("file", "text", "data", "nope"), file: jsonValue, text: jsonValue }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000_000, max: 9_000_000 }).map((n) => ({ text: "x".repeat(n), kind: "text" })) },
  { weight: 1, arbitrary: jsonValue },
);

/** A JSON-RPC request to an agent: known methods of both versions with wrong values, or anything. `ids` are task ids to aim at. */
export const a2aBody = (ids: () => string[]) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .record(
          {
            jsonrpc: fc.oneof({ weight: 6, arbitrary: fc.constant("2.0") }, { weight: 1, arbitrary: jsonValue }),
            id: fc.oneof(fc.integer(), oddString, fc.constant(null), jsonValue),
            method: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...A2A_METHODS) }, { weight: 1, arbitrary: oddString }),
            params: fc.oneof(
              {
                weight: 5,
                arbitrary: fc.record(
                  {
                    message: fc.oneof(
                      fc.record(
                        {
                          messageId: fc.oneof(fc.uuid(), oddString, jsonValue),
                          role: fc.oneof(fc.constantFrom("ROLE_USER", "user", "agent", "ROLE_AGENT"), jsonValue),
                          parts: fc.oneof(fc.array(a2aPart, { maxLength: 3 }), jsonValue),
                          contextId: fc.oneof(oddString, fc.constantFrom("thr_nope"), jsonValue),
                          taskId: fc.oneof(fc.nat().map((n) => ids()[n % Math.max(1, ids().length)] ?? "job_x"), oddString),
                          kind: fc.constant("message"),
                        },
                        { requiredKeys: ["messageId", "parts"] },
                      ),
                      jsonValue,
                    ),
                    configuration: fc.oneof(fc.record({ returnImmediately: fc.constant(true), blocking: fc.constant(false), historyLength: fc.oneof(fc.integer(), jsonValue), acceptedOutputModes: jsonValue, taskPushNotificationConfig: jsonValue, pushNotificationConfig: jsonValue }, { requiredKeys: ["returnImmediately", "blocking"] }), jsonValue),
                    id: fc.oneof(fc.nat().map((n) => ids()[n % Math.max(1, ids().length)] ?? "job_x"), oddString, jsonValue),
                    taskId: fc.oneof(oddString, jsonValue),
                    historyLength: fc.oneof(fc.integer(), jsonValue),
                    pageSize: fc.oneof(fc.integer({ min: -5, max: 500 }), jsonValue),
                    pageToken: fc.oneof(oddString, jsonValue),
                    status: fc.oneof(fc.constantFrom("TASK_STATE_COMPLETED", "TASK_STATE_WORKING", "TASK_STATE_REJECTED", "nope"), fc.integer(), jsonValue),
                    statusTimestampAfter: fc.oneof(oddString, fc.constant("2020-01-01T00:00:00Z"), jsonValue),
                    url: oddString,
                  },
                  { requiredKeys: [] },
                ),
              },
              { weight: 1, arbitrary: jsonValue },
            ),
          },
          { requiredKeys: ["method"] },
        )
        .map((b) => JSON.stringify(b)),
    },
    { weight: 1, arbitrary: bodyText },
  );

/**
 * A value nested `$deep` levels (arrays or objects), for fields that expect a flat one: a marker,
 * replaced in the JSON text by `expandDeep` (fast-check would recurse through the real value).
 */
const deep = fc.record({ $deep: fc.integer({ min: 50, max: 5_000 }), shape: fc.constantFrom("a", "o") });
const expandDeep = (json: string) =>
  json.replace(/\{"\$deep":(\d+),"shape":"(a|o)"\}/g, (_, d: string, shape: string) => (shape === "a" ? "[".repeat(+d) + "]".repeat(+d) : '{"a":'.repeat(+d) + "1" + "}".repeat(+d)));

/** A push config URL: accepted ones (a host that never resolves: .invalid), egress-refused ones, and anything. */
const pushUrl = fc.oneof(
  { weight: 3, arbitrary: oddString.map((p) => `https://hooks.invalid/${encodeURIComponent(p.replace(/[\uD800-\uDFFF]/g, "?")).slice(0, 300)}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "https://169.254.169.254/latest/meta-data", "https://127.0.0.1/x", "https://[::1]/x", "https://10.0.0.1/x", "http://hooks.invalid/x", "https://u:p@hooks.invalid/x",
      "https://hooks.invalid/x#frag", "file:///etc/passwd", "javascript:alert(1)", `https://hooks.invalid/${"a".repeat(3000)}`, "https://0x7f000001/", "https://[::ffff:127.0.0.1]/",
    ),
  },
  { weight: 2, arbitrary: oddString },
  { weight: 1, arbitrary: jsonValue },
);

/** A header-borne string (token, scheme, credentials): odd, huge, or with CR/LF. */
const pushHeaderText = fc.oneof(oddString, fc.constantFrom("Bearer", "tok\r\nX-Injected: 1", "é", "x".repeat(5000), "x".repeat(300_000)), jsonValue);

/**
 * A JSON-RPC call of the push config methods (v1.0 and v0.3 names and shapes) with hostile
 * urls, tokens, authentication objects, ids, page sizes and tokens, huge and deep values.
 * `taskIds` and `configIds` are ids to aim at (own, foreign, made up).
 */
export const a2aPushConfigBody = (taskIds: () => string[], configIds: () => string[]) => {
  const pick = (ids: () => string[]) => fc.nat().map((n) => ids()[n % Math.max(1, ids().length)] ?? "tsk_x");
  const taskId = fc.oneof({ weight: 4, arbitrary: pick(taskIds) }, { weight: 1, arbitrary: oddString }, { weight: 1, arbitrary: jsonValue });
  const configId = fc.oneof({ weight: 3, arbitrary: pick(configIds) }, { weight: 1, arbitrary: oddString }, { weight: 1, arbitrary: jsonValue });
  const authentication = fc.oneof(
    fc.record({ scheme: pushHeaderText, credentials: pushHeaderText }, { requiredKeys: [] }),
    fc.record({ schemes: fc.oneof(fc.array(pushHeaderText, { maxLength: 3 }), jsonValue), credentials: pushHeaderText }, { requiredKeys: [] }),
    jsonValue,
    deep,
  );
  const config = fc.record({ url: pushUrl, token: pushHeaderText, authentication, id: configId, tenant: oddString }, { requiredKeys: [] });
  const v1 = fc.oneof(
    fc.record({ method: fc.constant("CreateTaskPushNotificationConfig"), params: fc.tuple(taskId, config).map(([t, c]) => ({ taskId: t, ...c })) }),
    fc.record({ method: fc.constantFrom("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"), params: fc.record({ taskId, id: configId, tenant: oddString }, { requiredKeys: [] }) }),
    fc.record({
      method: fc.constant("ListTaskPushNotificationConfigs"),
      params: fc.record(
        {
          taskId,
          pageSize: fc.oneof(fc.integer({ min: -5, max: 500 }), fc.constantFrom(0, 1, 1e308, 2 ** 31, -0, 0.5), jsonValue),
          pageToken: fc.oneof(oddString, jsonValue.map((v) => Buffer.from(JSON.stringify(v) ?? "null").toString("base64url")), fc.constantFrom(Buffer.from('[1e300,"x"]').toString("base64url"), Buffer.from('[-1,""]').toString("base64url")), jsonValue),
        },
        { requiredKeys: [] },
      ),
    }),
  );
  const v03 = fc.oneof(
    fc.record({ method: fc.constant("tasks/pushNotificationConfig/set"), params: fc.record({ taskId, pushNotificationConfig: fc.oneof(config, jsonValue, deep) }, { requiredKeys: [] }) }),
    fc.record({ method: fc.constantFrom("tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/delete", "tasks/pushNotificationConfig/list"), params: fc.record({ id: taskId, pushNotificationConfigId: configId }, { requiredKeys: [] }) }),
  );
  return fc.oneof(
    { weight: 5, arbitrary: v1.map((c) => ({ ...c, v03: false })) },
    { weight: 2, arbitrary: v03.map((c) => ({ ...c, v03: true })) },
    { weight: 1, arbitrary: fc.record({ method: fc.constantFrom("CreateTaskPushNotificationConfig", "ListTaskPushNotificationConfigs"), params: fc.oneof(jsonValue, deep) }).map((c) => ({ ...c, v03: false })) },
  ).map(({ method, params, v03: legacy }) => ({ legacy, body: expandDeep(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })) }));
};

/** A deep JSON value of `depth` nested arrays or objects (jsonb and JSON parsers have depth limits). */
const deepJson = fc.tuple(fc.integer({ min: 100, max: 3000 }), fc.boolean()).map(([depth, arrays]) => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
});

/** createSchedule's input, hostile in every field (agentId is set by the test). */
export const scheduleInput = fc.record(
  {
    cron: fc.oneof(oddString, fc.constantFrom("* * * * *", "*/0 * * * *", "0 0 31 2 *", "@hourly", "0-59/1 * * * *", "1,2,3,4,5,6,7,8,9 * * JAN-DEC MON-SUN", "* * * * * *", "99999999999999999999 * * * *"), jsonValue),
    every: fc.oneof(oddString, fc.constantFrom("1s", "59s", "60s", "1m", "0m", "-1m", "1e3s", "999999999999d", "9007199254740993ms", "1h ", " 2 m", "1 week"), jsonValue),
    timezone: fc.oneof(oddString, fc.constantFrom("UTC", "Europe/Berlin", "europe/berlin", "Etc/GMT+14", "+01:00", "Local", "America/Argentina/ComodRivadavia", "x".repeat(200)), jsonValue),
    payload: fc.oneof(jsonValue, deepJson, fc.integer({ min: 60_000, max: 2_000_000 }).map((n) => ({ big: "x".repeat(n) })), fc.constant({ text: "a\u0000b" })),
    overlap: fc.oneof(fc.constantFrom("SKIP", "BUFFER_ONE", "ALLOW_ALL", "skip", "NOPE", ""), jsonValue),
    description: fc.oneof(oddString, fc.integer({ min: 900, max: 5000 }).map((n) => "d".repeat(n)), jsonValue),
  },
  { requiredKeys: [] },
);
