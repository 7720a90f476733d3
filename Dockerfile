# live-mem as a team server: MCP over Streamable HTTP at :8080/mcp (and the web viewer at /), the
# store in the /data volume (or S3: set LIVE_MEM_STORAGE=s3 and its settings). See README, "Run a
# team server". Auth is required: create tokens with LIVE_MEM_ADMIN_TOKEN.
FROM node:20-slim AS build
WORKDIR /app
COPY . .
# npm ci runs `prepare` (the build); then only what runs is kept.
RUN npm ci && npm prune --omit=dev

FROM node:20-slim
ENV NODE_ENV=production LIVE_MEM_HOME=/data LIVE_MEM_AUTH=required
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/node_modules ./node_modules
RUN ln -s /app/bin/live-mem.cjs /usr/local/bin/live-mem && mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["live-mem"]
CMD ["serve", "--http", "--host", "0.0.0.0", "--port", "8080"]
