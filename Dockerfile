# One image for the API (`npm run serve`), the worker (`npm run worker`) and migrations.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Dev dependencies stay: `npm run migrate` and the admin CLI run from source through swc.
RUN npm ci --include=dev --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json mikro-orm.config.ts schema.graphql ./
COPY src ./src
COPY workflows ./workflows
# The web console (Vite build into dist/web, served by the API at /)
COPY web ./web
RUN npm run build
USER node
EXPOSE 3000
CMD ["npm", "run", "serve"]
