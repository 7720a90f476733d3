# live-mem as a team server: MCP over Streamable HTTP at :8080/mcp (and the web viewer at /), the
# store in the /data volume (or S3: set LIVE_MEM_STORAGE=s3 and its settings). See docs/team.md.
# Auth is required: create tokens with LIVE_MEM_ADMIN_TOKEN.
FROM node:20-slim AS build
WORKDIR /app
COPY . .
# npm ci installs the build tools and runs `prepare` (the build). The image then gets what a user
# installs: the packed package (`npm run tarball`, scripts/pack.mjs), which needs no dependency, and
# beside it the AWS SDK — an optional peer dependency npm does not install by itself — so that
# LIVE_MEM_STORAGE=s3 works too.
RUN npm ci --no-audit --no-fund \
  && npm run tarball \
  && npm install -g --prefix /opt/live-mem --no-audit --no-fund ./live-mem-*.tgz \
     "@aws-sdk/client-s3@$(node -p "require('./package.json').peerDependencies['@aws-sdk/client-s3']")"

FROM node:20-slim
ENV NODE_ENV=production LIVE_MEM_HOME=/data LIVE_MEM_AUTH=required PATH=/opt/live-mem/bin:$PATH
COPY --from=build /opt/live-mem /opt/live-mem
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["live-mem"]
CMD ["serve", "--http", "--host", "0.0.0.0", "--port", "8080"]
