// Types of captcha-dlq-web/page (the content-script module).
import type { Solution } from './index.js';

export interface DetectedWidget {
  id: string;
  kind: 'recaptcha_v2' | 'recaptcha_v3' | 'hcaptcha' | 'turnstile' | 'funcaptcha' | 'geetest_v3' | 'geetest_v4' | 'aws_waf' | 'image';
  /** Task JSON for `client.solve` (the client validates it). */
  task: (Record<string, unknown> & { type: string }) | null;
  supported: boolean;
  callback: string | null;
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

export interface InPageResult {
  kind: DetectedWidget['kind'];
  params: DetectedWidget['task'];
  injected: boolean;
  callbackCalled: boolean;
  callback: string | null;
  fields?: string[];
  note?: string;
  solution?: Pick<Solution, 'text' | 'fields'>;
  error?: unknown;
}

export declare function hook(): void;
export declare function detect(): DetectedWidget[];
/** A promise where the widget's client takes the answer itself (hCaptcha rendered from code on a page not hooked). */
export declare function inject(id: string, solution: Pick<Solution, 'text' | 'fields'> | string): Injected | Promise<Injected>;
export declare function solveInPage(
  solve: (task: NonNullable<DetectedWidget['task']>, widget: DetectedWidget) => Promise<Pick<Solution, 'text' | 'fields'>>,
): Promise<InPageResult[]>;
