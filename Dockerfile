# One image for the API (`serve`), the worker (`worker`), migrations (`migrate`) and the admin CLI,
# all from the compiled dist/. Multi-stage: the final image carries production dependencies only
# (no TypeScript, swc, Vite, vitest, Playwright or Portkey).
#   docker build -t agent-gateway .
#   docker run --rm agent-gateway node dist/src/entry/migrate.js      # with DATABASE_URL
#   docker run agent-gateway                                         # the API
#   docker run agent-gateway node dist/src/entry/worker.js           # a worker

# 1. Build: all dependencies, compile the server (tsc) and the web console (Vite).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json mikro-orm.config.ts schema.graphql ./
COPY src ./src
COPY workflows ./workflows
COPY web ./web
RUN npm run build

# 2. Production dependencies only.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. Runtime: dist/ (server, workflows, console) + production node_modules.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 3000
CMD ["node", "--enable-source-maps", "dist/src/entry/serve.js"]
