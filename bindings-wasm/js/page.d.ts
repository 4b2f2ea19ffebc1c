// Types of captcha-dlq-web/page (the content-script module).
import type { Solution } from './index.js';

export interface DetectedWidget {
  id: string;
  kind: 'recaptcha_v2' | 'recaptcha_v3' | 'hcaptcha' | 'turnstile' | 'funcaptcha' | 'geetest_v3' | 'geetest_v4' | 'aws_waf' | 'cloudflare_challenge' | 'image';
  /** Task JSON for `client.solve` (the client validates it). */
  task: (Record<string, unknown> & { type: string }) | null;
  supported: boolean;
  callback: string | null;
  visible: boolean | null;
  scoreBased: boolean;
  note?: string;
  error?: string;
}

export interface Injected {
  injected: boolean;
  fields: string[];
  callbackCalled: boolean;
  callback: string | null;
  /** Why no callback was called, when `callbackCalled` is false and the widget has callbacks. */
  note?: string;
  error?: string;
}

/** What `solveInPage` needs of a client: a captcha-dlq-web `Client`, or a bridge of its shape to one elsewhere. */
export interface PageClient {
  solve(task: Record<string, unknown>, options?: { labels?: Record<string, string> }): Promise<Pick<Solution, 'text' | 'fields'> & Partial<Solution>>;
  dlq: {
    pageTask(args: { task: Record<string, unknown>; cookies?: string; proxy?: unknown }): Promise<{ task: Record<string, unknown>; shown: Record<string, unknown>; filled: string[] }>;
    pageAnswer(args: { task: Record<string, unknown>; solution: unknown; url: string }): Promise<{ cookies: { name: string; value: string; url: string }[]; reload: boolean; renewAt: number | null }>;
    recordPageOutcome?(args: Record<string, unknown>): Promise<unknown>;
  };
}

export interface InPageOptions {
  labels?: Record<string, string>;
  /** The task's proxy (a page cannot see the browser's): a URL, `{ server, username, password }`, or `false`. */
  proxy?: string | Record<string, unknown> | false;
  kinds?: DetectedWidget['kind'][];
  visibleOnly?: boolean;
  /** Solve score-based widgets (v3, invisible Enterprise without a trigger) too. Default false. */
  includeScoreBased?: boolean;
  /** Reload the page after a cookie answer was set (once the results are handed back). Default true. */
  reload?: boolean;
}

export interface InPageResult {
  kind: DetectedWidget['kind'];
  /** The task as the client shows it (proxy without credentials, cookies `***`). */
  params: Record<string, unknown> | null;
  injected: boolean;
  callbackCalled: boolean;
  callback: string | null;
  fields?: string[];
  /** Names of the cookies a cookie answer set. */
  cookies?: string[];
  /** The page reloads with the cookie once the results are handed back. */
  reloading?: boolean;
  /** Cookie answers the page could not write (an HttpOnly cookie of that name exists): the caller sets them. */
  cookiesToSet?: { name: string; value: string; url: string }[];
  /** When the injected token is to be solved again if the page has not used it (Unix ms; the client decides). */
  renewAt?: number;
  resolves: number;
  note?: string;
  solution?: Solution;
  error?: unknown;
}

export declare function hook(): void;
export declare function detect(): DetectedWidget[];
/** A promise where the widget's client takes the answer itself (hCaptcha rendered from code on a page not hooked). */
export declare function inject(id: string, solution: Pick<Solution, 'text' | 'fields'> | string): Injected | Promise<Injected>;
export declare function solveInPage(client: PageClient, options?: InPageOptions): Promise<InPageResult[]>;
/**
 * Keeps the injected answers of `results` fresh: every `intervalMs` (default 1000) a result whose widget's
 * expired-callback fired, or whose `renewAt` came while the widget is still in the document, is solved again and
 * injected (`resolves` counts it).
 */
export declare function keepFresh(results: InPageResult[], options?: { intervalMs?: number }): { stop(): Promise<void> };
