// Documentation served by the API, generated from the route table it documents.
import { z } from 'zod';
import { docsPageCsp, renderDocsPage } from './page.ts';
import { renderLlmsFullTxt, renderLlmsTxt } from './llms.ts';
import { buildOpenApi, toYaml } from './openapi.ts';
import { defineRoute } from '../http/route.ts';
import { htmlPageHeaders, type HeaderList } from '../http/headers.ts';
import { Reply, type RouteDef } from '../http/types.ts';

const CACHE: HeaderList = [['Cache-Control', 'public, max-age=300']];

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  let made = false;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value as T;
  };
}

/** `routes` plus the routes that document them all (/openapi.yaml, /openapi.json, /docs, /llms.txt, /llms-full.txt). */
export function withDocs(routes: readonly RouteDef[], options: { serverUrl?: string } = {}): RouteDef[] {
  const table: RouteDef[] = [...routes];
  table.push(...docRoutes(() => table, options));
  return table;
}

/** `table` is read on first use, so these routes can document themselves and routes added after them. */
export function docRoutes(table: () => readonly RouteDef[], options: { serverUrl?: string } = {}): RouteDef[] {
  const doc = once(() => buildOpenApi(table(), options));
  const yaml = once(() => toYaml(doc()));
  const json = once(() => JSON.stringify(doc()));
  const html = once(() => renderDocsPage(doc()));
  const htmlHeaders = once((): HeaderList => [...CACHE, ...htmlPageHeaders(docsPageCsp())]);
  const llms = once(() => renderLlmsTxt(doc()));
  const llmsFull = once(() => renderLlmsFullTxt(doc()));
  const text = (description: string) => z.string().meta({ description });
  const page = (
    id: string,
    path: string,
    summary: string,
    type: string,
    body: () => string,
    schema: z.ZodType = text(summary),
    headers: () => HeaderList = () => CACHE,
  ): RouteDef =>
    defineRoute({
      id,
      method: 'GET',
      path,
      summary,
      tags: ['Documentation'],
      auth: 'none',
      meter: null,
      contentType: type,
      response: schema,
      handler: () => new Reply(200, type, body(), headers()),
    });
  return [
    page('getOpenApiYaml', '/openapi.yaml', 'OpenAPI 3.1 document (YAML)', 'application/yaml', yaml),
    page(
      'getOpenApiJson',
      '/openapi.json',
      'OpenAPI 3.1 document (JSON)',
      'application/json',
      json,
      z.record(z.string(), z.unknown()).meta({ description: 'The OpenAPI document as JSON.' }),
    ),
    page(
      'getDocs',
      '/docs',
      'Rendered API reference',
      'text/html; charset=utf-8',
      html,
      text('Rendered API reference'),
      htmlHeaders,
    ),
    page('getLlmsTxt', '/llms.txt', 'Short guide for LLMs', 'text/plain; charset=utf-8', llms),
    page('getLlmsFullTxt', '/llms-full.txt', 'Expanded guide for LLMs', 'text/plain; charset=utf-8', llmsFull),
  ];
}
