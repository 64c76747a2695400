// Runs before the TypeScript loader in `npm start`, `npm test` and `npm run admin`, on whatever
// Node is first on PATH: so it is plain CommonJS with nothing newer than ES5 in it.
var major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  process.stderr.write(
    "Agent Gateway needs Node.js 24 or newer; `node` here is " + process.version + " (" + process.execPath + ").\n" +
      "Get Node 24 from the npm registry and put it first on PATH:\n" +
      "  npm install --prefix .tools/node node@24 && export PATH=\"$PWD/.tools/node/node_modules/.bin:$PATH\"\n"
  );
  process.exit(1);
}
