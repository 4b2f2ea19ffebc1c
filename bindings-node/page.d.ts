// Types of `captcha-dlq/page`: solving a Playwright or Puppeteer page's CAPTCHAs through a captcha-dlq client.
import type { Client, Labels, Solution, CaptchaDlqError, PageProxy } from './index.js';

/** The widget kinds the page detector knows. `aws_waf` becomes an `amazon_waf` task; `aws_waf` and `cloudflare_challenge` answers are cookies. */
export type WidgetKind =
  | 'recaptcha_v2'
  | 'recaptcha_v3'
  | 'hcaptcha'
  | 'turnstile'
  | 'funcaptcha'
  | 'geetest_v3'
  | 'geetest_v4'
  | 'aws_waf'
  | 'cloudflare_challenge'
  | 'image';

/** Structural page types: a Playwright `Page` or a Puppeteer `Page` fits (no import of either package). */
export interface DriverFrame {
  url(): string;
  evaluate(fn: unknown, arg?: unknown): Promise<unknown>;
}
export interface DriverPage {
  frames(): DriverFrame[];
  mainFrame(): DriverFrame;
  on(event: string, listener: (...args: any[]) => unknown): unknown;
  off(event: string, listener: (...args: any[]) => unknown): unknown;
}

/** A response, as both drivers give it. */
export interface DriverResponse {
  url(): string;
  status(): number;
}

/** Did the site take the answer? Exactly one of `navigation`, `response`, `predicate`. */
export interface AcceptanceCheck {
  /** Accepted if the main frame navigates within `timeoutMs`; rejected if not. */
  navigation?: true;
  /** Called with each response: `true` accepted, `false` rejected, `undefined` not the one (no verdict by `timeoutMs`: unknown). */
  response?: (response: DriverResponse) => boolean | undefined | Promise<boolean | undefined>;
  /** Asked once the answers are in: truthy accepted, falsy rejected. */
  predicate?: (page: any) => boolean | Promise<boolean>;
  /** Default 10000. */
  timeoutMs?: number;
}

/** Which widgets `findWidgets` (and `solveOnPage`) take. */
export interface FindWidgetsOptions {
  /** Only these kinds. */
  kinds?: WidgetKind[];
  /** Leave out widgets laid out hidden (`visible: false`). Default false. */
  visibleOnly?: boolean;
  /** Take score-based widgets too (reCAPTCHA v3, invisible Enterprise without a visible trigger). Default false. */
  includeScoreBased?: boolean;
  /** Wait up to `timeoutMs` for widgets (of `kinds`) still loading, in any frame; none by then is an empty list. */
  waitFor?: { timeoutMs: number };
}

/** A widget `findWidgets` found (it keeps its frame for `solveWidget` and `injectAnswer`). */
export interface Widget {
  /** The detector's id in its frame (valid until the frame is searched again). */
  id: string;
  kind: WidgetKind;
  /** The URL of the frame it is in. */
  frame: string;
  /** The task JSON the detector read from the page (`null`: it gave none, see `error`). */
  params: (Record<string, unknown> & { type: string }) | null;
  supported: boolean;
  /** Laid out and not hidden (`null`: a widget with no element, from scripts or calls). */
  visible: boolean | null;
  scoreBased: boolean;
  callback: string | null;
  note?: string;
  /** Why it gave no task. */
  error?: string;
}

export interface SolveWidgetOptions {
  /** Labels for the task (it also gets `page_host` and `widget`). */
  labels?: Labels;
  /** Cancels the solve (see `SolveOptions.signal`). */
  signal?: AbortSignal;
  /** As `SolveOnPageOptions.proxy`. */
  proxy?: PageProxy | false;
}

export interface SolveOnPageOptions extends FindWidgetsOptions {
  /** Labels for every task (each also gets `page_host` and `widget`). */
  labels?: Labels;
  /** Cancels the solves (see `SolveOptions.signal`). */
  signal?: AbortSignal;
  check?: AcceptanceCheck;
  /**
   * The proxy the tasks go through (kinds that take one): absent, the browser's (Playwright's context or launch
   * `proxy`, `--proxy-server`); `false`, none; a proxy (with its credentials), that one instead (a browser whose
   * proxy the service cannot reach).
   */
  proxy?: PageProxy | false;
}

/** One widget found on the page and what became of it. */
export interface WidgetResult {
  kind: WidgetKind;
  /** The URL of the frame it was in. */
  frame: string;
  /** The task solved (the client validated it), as shown: the proxy as `type://host:port`, the cookies as `***`. */
  params: Record<string, unknown> & { type: string };
  /** The answer was written where the widget expects it (or handed to its callback). */
  injected: boolean;
  callbackCalled: boolean;
  /** Which callback: `data-callback`, `render` (render parameters), `client` (the widget client's own state), `client-message` (hCaptcha's client took the answer through its frames' message channel and ran its callbacks), `execute` (reCAPTCHA v3 calls), `onCompleted` (Arkose), `onSuccess` (GeeTest), or null. */
  callback: string | null;
  /** The fields written (`g-recaptcha-response#g-recaptcha-response-1`, `cf-turnstile-response`…). */
  fields?: string[];
  solution?: Solution;
  /** The acceptance check's verdict (`null`: none came); absent without a check. */
  accepted?: boolean | null;
  /** Why it was not solved or not injected: a client error, `NOT_SOLVABLE` (a kind this build lacks, an unreadable image), `PAGE_GONE`. */
  error?: CaptchaDlqError | { code: 'NOT_SOLVABLE' | 'PAGE_GONE'; message: string; cause?: unknown };
  /** For `PAGE_GONE`: the dead-letter record that keeps the answer and why. */
  recorded?: { recorded: string | null; reported: boolean | null };
  /** For answers that are cookies (`amazon_waf`, `datadome`, `cloudflare_challenge`): the cookies written into the browser. */
  cookies?: string[];
  /** For cookie answers: the page (or frame) was loaded again with them. */
  reloaded?: boolean;
  /** How many times the widget was solved again since (`refreshAnswer`, `keepFresh`, `resolveExpired`). */
  resolves?: number;
  /** For a token injected into a widget: when it is solved again if the page has not used it by then (Unix ms; the
   * client's decision from the kind's declared life; `keepFresh` and `resolveExpired` act on it). */
  renewAt?: number;
  /** What the detector could not read without `preparePage`, and why no callback was called when `callbackCalled` is false. */
  note?: string;
}

/** The detector's source (lib/page-detector.js, copied from the repository's page-detector-js/ at build), for pages you drive yourself. */
export declare const DETECTOR_SOURCE: string;

/** Hooks the page's future documents (call before `goto`): render parameters, v3 actions, GeeTest and Arkose configurations. */
export declare function preparePage(page: DriverPage): Promise<void>;

/** The page's CAPTCHA widgets in all its frames (score-based ones only with `includeScoreBased`). */
export declare function findWidgets(page: DriverPage, options?: FindWidgetsOptions): Promise<Widget[]>;

/** Solves one widget through `client` (the browser's proxy, cookies and user agent on its task); writes nothing into the page. */
export declare function solveWidget(client: Client, widget: Widget, options?: SolveWidgetOptions): Promise<WidgetResult>;

/** Writes a `solveWidget` result's answer into the page (or its cookie into the browser, reloading when the kind needs it); answers the result, updated. */
export declare function injectAnswer(client: Client, result: WidgetResult, options?: Record<string, never>): Promise<WidgetResult>;

/** Solves an injected result's widget again and injects the new answer (a token whose life ended); counts it in `resolves`. */
export declare function refreshAnswer(client: Client, result: WidgetResult, options?: { signal?: AbortSignal }): Promise<WidgetResult>;

/** Solves again, and injects, the results whose widget's expired-callback fired since last asked; answers how many. */
export declare function resolveExpired(client: Client, results: WidgetResult[]): Promise<number>;

/** Runs `resolveExpired` every `intervalMs` (default 1000) in the background until `stop()`. */
export declare function keepFresh(client: Client, results: WidgetResult[], options?: { intervalMs?: number }): { stop(): Promise<void> };

/** Finds the page's CAPTCHAs in all its frames, solves each through `client`, injects the answers and calls the page's callbacks: `findWidgets`, `solveWidget`, `injectAnswer` composed. */
export declare function solveOnPage(client: Client, page: DriverPage, options?: SolveOnPageOptions): Promise<WidgetResult[]>;
