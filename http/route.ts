// defineRoute: declare a route once, with handler types inferred from its zod schemas.
import type { z } from 'zod';
import type { FileReply, Reply, RequestContext, RouteDef, StreamReply } from './types.ts';

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

export type RouteSpec<
  Q extends z.ZodObject | undefined,
  P extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
  R extends z.ZodType,
> = Omit<RouteDef, 'handler' | 'query' | 'params' | 'body' | 'response'> & {
  query?: Q;
  params?: P;
  body?: B;
  response: R;
  handler(
    ctx: RequestContext<Out<Q>, Out<P>, B extends z.ZodType ? z.output<B> : undefined>,
  ): z.input<R> | Reply | FileReply | StreamReply | Promise<z.input<R> | Reply | FileReply | StreamReply>;
};

export function defineRoute<
  R extends z.ZodType,
  Q extends z.ZodObject | undefined = undefined,
  P extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<Q, P, B, R>): RouteDef {
  return spec as unknown as RouteDef;
}
