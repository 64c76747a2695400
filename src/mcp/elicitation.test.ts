import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../errors/app-error.js";
import { answerOf, elicitationOf, isFlatFormSchema } from "./elicitation.js";

const flat = { type: "object", properties: { ok: { type: "boolean", title: "Approve" }, reason: { type: "string", maxLength: 200 }, size: { type: "string", enum: ["s", "m"] } }, required: ["ok"] };
const nested = { type: "object", properties: { items: { type: "array", items: { type: "string" } }, owner: { type: "object", properties: { name: { type: "string" } } } } };

describe("a ctx.ask question as an MCP form elicitation", () => {
  it("a flat schema is offered as it is, and the form's content is the answer", () => {
    expect(isFlatFormSchema(flat)).toBe(true);
    expect(elicitationOf({ prompt: "Ship it?", schema: flat }).params.requestedSchema).toEqual(flat);
    expect(answerOf({ schema: flat }, { action: "accept", content: { ok: true } })).toEqual({ value: { ok: true } });
  });

  it("any other schema is one JSON text field that names the schema; without a schema the text is the answer", () => {
    expect(isFlatFormSchema(nested)).toBe(false);
    const offered = elicitationOf({ prompt: "Which items?", schema: nested }).params.requestedSchema as { properties: { answer: { type: string; description: string } } };
    expect(offered.properties.answer.type).toBe("string");
    expect(offered.properties.answer.description).toContain(JSON.stringify(nested));
    expect(answerOf({ schema: nested }, { action: "accept", content: { answer: '{"items":["a"]}' } })).toEqual({ value: { items: ["a"] } });
    expect(answerOf({ schema: null }, { action: "accept", content: { answer: "yes, go" } })).toEqual({ value: "yes, go" });
  });

  it("decline and cancel leave the question open", () => {
    expect(answerOf({ schema: flat }, { action: "decline" })).toBeUndefined();
    expect(answerOf({ schema: null }, { action: "cancel" })).toBeUndefined();
  });

  it("any input response: an answer, nothing, or validation_failed — never another error", () => {
    fc.assert(
      fc.property(fc.constantFrom<unknown>(flat, nested, null), fc.anything(), fc.oneof(fc.anything(), fc.record({ action: fc.constantFrom("accept", "decline", "cancel", "x"), content: fc.anything() })), (schema, _seed, response) => {
        try {
          const r = answerOf({ schema }, response);
          if (r) expect(r).toHaveProperty("value");
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe("validation_failed");
        }
      }),
      { numRuns: 500 },
    );
  });
});
