import type { McpServer, Resource, Variables } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, ResourceTemplate, UriTemplate } from '@modelcontextprotocol/server';
import { ANONYMOUS } from '../core/auth/auth-service.js';
import type { BankFileInfo } from '../core/bank/bank-service.js';
import { authorize, type Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import { escapeShown, fenceLines, newNonce, oneLine, shownDataRule } from '../core/prompt-fence.js';
import { validateSpaceId } from '../core/validate.js';
import { mapLimit } from '../shared/concurrency.js';
import { isLiveMemError } from '../shared/errors.js';
import type { Offered } from '../shared/hints.js';
import type { Logger } from '../shared/log.js';
import { resourceUri } from './feed-notices.js';
import { createResourceWatch } from './resource-watch.js';
import { protocolError } from './result.js';
import type { RequestContext } from './tool.js';

const MIME = 'text/markdown';

/** Live notes the `live` resource shows, newest first. */
const LIVE_NOTES = 50;

/** A space the caller may read, with what its listing needs. */
interface ListedSpace {
  space_id: string;
  description: string;
  bank: BankFileInfo[];
}

/** A kind of resource is data, like a tool: its template, how a readable space lists it, how it is read. */
interface ResourceKind {
  name: string;
  title: string;
  description: string;
  template: string;
  list(space: ListedSpace): Resource[];
  read(core: Core, caller: Caller, vars: Record<string, string>): Promise<string>;
}

const kinds: ResourceKind[] = [
  {
    name: 'bank-file',
    title: 'Memory bank file',
    description: "One file of a space's memory bank, written by consolidation from the live notes.",
    template: 'live-mem://{space}/bank/{file}',
    list: (space) =>
      space.bank.map((file) => ({
        uri: resourceUri.bank(space.space_id, file.filename),
        name: `${space.space_id}/bank/${file.filename}`,
        title: `${file.filename} (${space.space_id})`,
        mimeType: MIME,
        size: file.size,
        annotations: { lastModified: file.last_modified },
      })),
    read: async (core, caller, vars) => (await core.bank.read(caller, { space_id: vars.space ?? '', filename: vars.file ?? '' })).content,
  },
  {
    name: 'rules',
    title: 'Space rules',
    description: 'The rules of a space: which bank files exist and what each holds.',
    template: 'live-mem://{space}/rules',
    list: (space) => [
      {
        uri: resourceUri.rules(space.space_id),
        name: `${space.space_id}/rules`,
        title: `Rules of ${space.space_id}${space.description ? ` (${space.description})` : ''}`,
        mimeType: MIME,
      },
    ],
    read: async (core, caller, vars) => (await core.spaces.rules(caller, { space_id: vars.space ?? '' })).rules,
  },
  {
    name: 'synthesis',
    title: 'Space synthesis',
    description: 'The short synthesis of a space that each consolidation updates; empty before the first one.',
    template: 'live-mem://{space}/synthesis',
    list: (space) => [
      { uri: resourceUri.synthesis(space.space_id), name: `${space.space_id}/synthesis`, title: `Synthesis of ${space.space_id}`, mimeType: MIME },
    ],
    read: async (core, caller, vars) => (await core.spaces.synthesis(caller, { space_id: vars.space ?? '' })).synthesis,
  },
  {
    name: 'live-notes',
    title: 'Live notes',
    description: `The newest ${LIVE_NOTES} live notes of a space, newest first: subscribe to it to be told of notes written by any agent, process or host.`,
    template: 'live-mem://{space}/live',
    list: (space) => [{ uri: resourceUri.live(space.space_id), name: `${space.space_id}/live`, title: `Live notes of ${space.space_id}`, mimeType: MIME }],
    read: async (core, caller, vars) => {
      const spaceId = vars.space ?? '';
      const { notes, has_more } = await core.notes.read(caller, { space_id: spaceId, limit: LIVE_NOTES });
      // Read into a model's context as it is: marked as data the way memory_context marks its notes (prompt-fence.ts).
      const nonce = newNonce();
      const { open, close } = fenceLines(nonce, 'notes');
      const lines = notes.map((note) =>
        escapeShown(`- [${oneLine(note.timestamp)} ${JSON.stringify(oneLine(note.agent))} ${oneLine(note.category)}] ${oneLine(note.content)}`),
      );
      const older = has_more ? `\nOlder notes: live_read with before ${JSON.stringify(notes.at(-1)?.filename ?? '')}.\n` : '';
      return `# Live notes of space '${spaceId}', newest first\n\n${shownDataRule(nonce)}\n\n${open}\n${lines.join('\n')}\n${close}\n${older}`;
    },
  },
];

export interface ResourceHost {
  core: Core;
  logger: Logger;
  /** Who is calling this request (throws `forbidden` for an unknown, revoked or expired token). */
  caller(ctx: RequestContext): Promise<Caller>;
  /** Whether the transport can notify (stdio); without, no subscriptions and no list_changed. */
  notifications?: boolean;
  /** What the server offers, for the hints of errors. */
  offered?: Offered;
}

/** A template's variables, URI-decoded; a malformed escape is a bad request. */
function decode(variables: Variables): Record<string, string> {
  try {
    return Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, decodeURIComponent(Array.isArray(value) ? value.join(',') : value)]));
  } catch {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'malformed percent-encoding in the resource URI');
  }
}

/** The URI templates of the kinds, to tell which space a URI names. */
const templates = kinds.map((kind) => new UriTemplate(kind.template));

/**
 * A URI a client may subscribe to (resources/subscribe, a listen stream's resourceSubscriptions):
 * normalised, with the space it names, checked as the core checks an id — or an invalid-params error.
 * Whether the caller may read that space is the caller's check (authorize).
 */
export function subscribable(raw: string): { uri: string; spaceId: string } {
  let uri: string;
  try {
    uri = new URL(raw).href;
  } catch {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `invalid resource URI ${JSON.stringify(raw)}`);
  }
  for (const template of templates) {
    const variables = template.match(uri);
    if (variables) return { uri, spaceId: validateSpaceId(decode(variables).space ?? '') };
  }
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `unknown resource URI ${JSON.stringify(uri)}: live-mem://{space}/bank/{file}, …/rules, …/synthesis or …/live`,
  );
}

/**
 * Registers each space's bank files, rules, synthesis and live notes as resources (listed and as
 * templates), read through the core with the caller, so a read is refused exactly as the tools refuse it.
 * Subscriptions live as long as this server (one client) and are fed by the core's change feed, which
 * sees changes made by any process or host on the store: a subscribed URI whose content changed (a
 * note, a commit, a correction) gets `notifications/resources/updated`; a created or deleted bank file
 * of a watched space, or a created or deleted space, sends `notifications/resources/list_changed` to a
 * client that has listed resources, when its caller may read that space. A bank file created by a
 * consolidation in this process in a space nobody here watches still changes the list, as before.
 * That is the 2025 era's delivery; a 2026-07-28 client hears of changes on the listen streams it opens,
 * which the serving entry answers and watches (listen-watch.ts), so its instance watches nothing.
 */
export function registerResources(server: McpServer, host: ResourceHost): void {
  const { core, logger } = host;
  const send = (notification: Promise<void>) =>
    notification.catch((error: unknown) => logger.debug('a resource notification was not sent', { error: String(error) }));
  // Without notifications (stateless HTTP) nothing is watched: no subscription, no list_changed.
  const watch =
    host.notifications === false
      ? undefined
      : createResourceWatch(core, {
          updated: (uri) => server.isConnected() && void send(server.server.sendResourceUpdated({ uri })),
          listChanged: () => server.isConnected() && void send(server.server.sendResourceListChanged()),
        });

  /** The spaces the caller may read, once per resources/list (each template's list callback asks). */
  const listings = new WeakMap<object, Promise<ListedSpace[]>>();
  const listSpaces = async (ctx: RequestContext): Promise<ListedSpace[]> => {
    let caller: Caller;
    try {
      caller = await host.caller(ctx);
    } catch (error) {
      // An unknown or revoked token lists nothing rather than failing the client's startup listing.
      if (!isLiveMemError(error, 'forbidden')) throw error;
      caller = ANONYMOUS;
    }
    void watch?.listed(caller);
    const listed = await core.spaces.list(caller).catch((error: unknown) => {
      if (isLiveMemError(error, 'forbidden')) return { spaces: [] };
      throw error;
    });
    // A damaged space (its meta unreadable) has nothing to list: it is left out, the others listed.
    const readable = listed.spaces.filter((space) => !('error' in space && space.error));
    const spaces = await mapLimit(readable, core.context.storage.parallelism, async (space) => {
      try {
        return { space_id: space.space_id, description: space.description, bank: await core.bank.listing(caller, space) };
      } catch (error) {
        if (isLiveMemError(error, 'not_found')) return null; // deleted since listed
        throw error;
      }
    });
    return spaces.filter((space) => space !== null);
  };
  const listing = (ctx: RequestContext): Promise<ListedSpace[]> => {
    let found = listings.get(ctx);
    if (!found) listings.set(ctx, (found = listSpaces(ctx)));
    return found;
  };

  for (const kind of kinds) {
    server.registerResource(
      kind.name,
      new ResourceTemplate(kind.template, {
        list: async (ctx) => {
          try {
            return { resources: (await listing(ctx)).flatMap((space) => kind.list(space)) };
          } catch (error) {
            throw protocolError(error, logger, 'resources/list', host.offered);
          }
        },
      }),
      { title: kind.title, description: kind.description, mimeType: MIME },
      async (uri, variables, ctx) => {
        try {
          const text = await kind.read(core, await host.caller(ctx), decode(variables));
          return { contents: [{ uri: uri.href, mimeType: MIME, text }] };
        } catch (error) {
          throw protocolError(error, logger, `resources/read ${uri.href}`, host.offered);
        }
      },
    );
  }

  if (!watch) return;
  server.server.setRequestHandler('resources/subscribe', async (request, ctx) => {
    try {
      const { uri, spaceId } = subscribable(request.params.uri);
      authorize(await host.caller(ctx), 'read', spaceId);
      // Answered once the space's baseline is taken: any change after this answer is told.
      await watch.subscribe(uri, spaceId);
      return {};
    } catch (error) {
      throw protocolError(error, logger, 'resources/subscribe', host.offered);
    }
  });
  server.server.setRequestHandler('resources/unsubscribe', (request) => {
    const { uri } = request.params;
    watch.unsubscribe(URL.canParse(uri) ? new URL(uri).href : uri);
    return {};
  });

  const closed = server.server.onclose;
  server.server.onclose = () => {
    watch.close();
    closed?.();
  };
}
