/**
 * The service version, read once from the repository's root package.json (the one place it is
 * written). Shown as MCP `serverInfo.version` (/mcp and /mcp/docs) and OpenAPI `info.version`;
 * not to be confused with the tools version (a digest of the catalogue, see registry.ts).
 */
import rootPackage from '../../../package.json' with { type: 'json' };

export const KITTY_VERSION: string = rootPackage.version;
