/**
 * The console's "Insert example script": one model call (so a first test run shows a cost and a
 * thread link, as docs/guides/console.md says) and the input echoed back. No imports: the tests load it too.
 */
export const exampleScript = (model: string) => `export default async function run(input, ctx) {
  ctx.log("received", input);
  const reply = await ctx.chat({ model: "${model}", messages: [{ role: "user", content: "Summarise in one sentence: " + JSON.stringify(input) }] });
  return { ok: true, received: input, summary: reply.content };
}
`;
