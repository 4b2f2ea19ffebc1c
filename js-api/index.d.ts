// Types of captcha-dlq's JavaScript API: the one source for both npm packages,
// `captcha-dlq` (Node, napi addon) and `captcha-dlq-web` (browser, wasm), which
// share js-api/client.js and js-api/errors.js (each package ships them as lib/). Defaults below are the
// client's and the core's (client/src/options/mod.rs, core/src/engine/config.rs, core/src/dlq/replay.rs,
// core/src/provider/limits.rs = docs/providers.md); where a default depends on
// the provider, the figure for the default provider (captchaai) is given and
// docs/providers.md has the others.

// ---------------------------------------------------------------- tasks

// <generated: kinds>
// Generated from core/kinds/*.toml by `cargo xtask kinds`: do not edit.

/** Task kinds, as `type`; also the keys of per-kind options (`firstPollMs`, `price`). */
export type TaskType =
  | 'image'
  | 'recaptcha_v2'
  | 'recaptcha_v3'
  | 'turnstile'
  | 'geetest_v3'
  | 'geetest_v4'
  | 'funcaptcha'
  | 'hcaptcha'
  | 'text'
  | 'raw'
  | 'amazon_waf'
  | 'datadome'
  | 'mtcaptcha'
  | 'friendly_captcha'
  | 'prosopo'
  | 'altcha'
  | 'tencent'
  | 'cutcaptcha'
  | 'lemin'
  | 'keycaptcha'
  | 'capy'
  | 'cybersiara'
  | 'yandex_smart'
  | 'captchafox'
  | 'atb_captcha'
  | 'vk_captcha'
  | 'binance'
  | 'yidun'
  | 'basilisk'
  | 'tspd'
  | 'alibaba'
  | 'hunt'
  | 'temu'
  | 'grid'
  | 'coordinates'
  | 'canvas'
  | 'rotate'
  | 'audio'
  | 'vk_image'
  | 'cloudflare_challenge'
  | 'recaptcha_classification'
  | 'hcaptcha_classification'
  | 'funcaptcha_classification'
  | 'antigate';

/** A proxy the solving service uses for the task (not the client's own traffic: see `ClientOptions.proxy`). */
export interface TaskProxy {
  type: 'http' | 'https' | 'socks4' | 'socks5';
  host: string;
  port: number;
  login?: string;
  password?: string;
}

/** A normal image CAPTCHA: recognise the text in `body`. */
export interface ImageTask {
  type: 'image';
  /** The image, base64. */
  body: string;
  /** The answer contains at least two words. */
  phrase?: boolean;
  /** The answer is case-sensitive (also taken as `caseSensitive`). */
  regsense?: boolean;
  /** 0 any, 1 digits only, 2 letters only, 3 digits or letters, 4 both. */
  numeric?: number;
  /** The image shows arithmetic to compute. */
  calc?: boolean;
  /** The answer's least length. */
  minLen?: number;
  /** The answer's greatest length. */
  maxLen?: number;
  /** 0 any, 1 Cyrillic, 2 Latin. */
  language?: number;
  /** Language code of the instructions (`en`, `ru`, ...). */
  lang?: string;
  /** Instructions shown to the worker. */
  textinstructions?: string;
  /** An image (base64) with instructions shown to the worker. */
  imginstructions?: string;
}

/** The answer of a `image` task, by name (`Solution.answer`). */
export interface ImageTaskAnswer {
  /** The answer as the worker typed it. */
  text: string;
}

/** reCAPTCHA v2 (checkbox or invisible, optionally Enterprise). */
export interface RecaptchaV2Task {
  type: 'recaptcha_v2';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The widget is invisible. */
  invisible?: boolean;
  /** reCAPTCHA Enterprise. */
  enterprise?: boolean;
  /** The widget's `data-s` value. */
  dataS?: string;
  /** Cookies for the page. */
  cookies?: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
  /** `google.com` or `recaptcha.net`. */
  domain?: 'google.com' | 'recaptcha.net';
  /** The widget's action, where the site sets one. */
  action?: string;
}

/** The answer of a `recaptcha_v2` task, by name (`Solution.answer`). */
export interface RecaptchaV2Answer {
  /** The token to submit with the form. */
  token: string;
}

/** reCAPTCHA v3 (score based). */
export interface RecaptchaV3Task {
  type: 'recaptcha_v3';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The action the page passes to `grecaptcha.execute`. */
  action?: string;
  /** The least score wanted (0.1..=0.9). */
  minScore?: number;
  /** reCAPTCHA Enterprise. */
  enterprise?: boolean;
  /** `google.com` or `recaptcha.net`. */
  domain?: 'google.com' | 'recaptcha.net';
}

/** The answer of a `recaptcha_v3` task, by name (`Solution.answer`). */
export interface RecaptchaV3Answer {
  /** The token to submit with the form. */
  token: string;
}

/** Cloudflare Turnstile. */
export interface TurnstileTask {
  type: 'turnstile';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The widget's action. */
  action?: string;
  /** The widget's `cData`. */
  data?: string;
  /** The challenge page's `chlPageData`. */
  pageData?: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `turnstile` task, by name (`Solution.answer`). */
export interface TurnstileAnswer {
  /** The token. */
  token: string;
  /** The user agent the token is bound to, where the service says. */
  userAgent?: string;
}

/** GeeTest v3 (`gt` and a fresh `challenge`). */
export interface GeeTestV3Task {
  type: 'geetest_v3';
  /** The site's `gt`. */
  gt: string;
  /** A fresh `challenge` (each is good once). */
  challenge: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The GeeTest API server the page uses (`api-na.geetest.com`). */
  apiServer?: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `geetest_v3` task, by name (`Solution.answer`). */
export interface GeeTestV3Answer {
  /** `geetest_challenge`. */
  challenge: string;
  /** `geetest_validate`. */
  validate: string;
  /** `geetest_seccode`. */
  seccode: string;
}

/** GeeTest v4 (`captcha_id`). */
export interface GeeTestV4Task {
  type: 'geetest_v4';
  /** The site's `captcha_id`. */
  captchaId: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `geetest_v4` task, by name (`Solution.answer`). */
export interface GeeTestV4Answer {
  /** The site's `captcha_id`. */
  captchaId: string;
  /** `lot_number`. */
  lotNumber: string;
  /** `pass_token`. */
  passToken: string;
  /** `gen_time`. */
  genTime: string;
  /** `captcha_output`. */
  captchaOutput: string;
}

/** Arkose Labs FunCaptcha. */
export interface FunCaptchaTask {
  type: 'funcaptcha';
  /** The site's public key. */
  publicKey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The API's subdomain or URL (`surl`). */
  surl?: string;
  /** Extra values, sent as `data[key]=value` (e.g. `blob`). */
  data?: Record<string, string>;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `funcaptcha` task, by name (`Solution.answer`). */
export interface FunCaptchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** hCaptcha. Most services have dropped it (see `[dropped]`); a service that refuses it hands the task to the next one. */
export interface HCaptchaTask {
  type: 'hcaptcha';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The widget is invisible. */
  invisible?: boolean;
  /** Enterprise `rqdata`. */
  data?: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `hcaptcha` task, by name (`Solution.answer`). */
export interface HCaptchaAnswer {
  /** The token. */
  token: string;
  /** `respKey`, where the service gives it. */
  respKey?: string;
  /** The user agent the token is bound to. */
  userAgent?: string;
}

/** A text question a worker answers ("Is today Monday?"), at most 140 characters. */
export interface TextCaptchaTask {
  type: 'text';
  /** The question, as the site shows it. */
  text: string;
  /** Language code of the instructions (`en`, `ru`, ...). */
  lang?: string;
}

/** The answer of a `text` task, by name (`Solution.answer`). */
export interface TextCaptchaAnswer {
  /** The answer as the worker typed it. */
  text: string;
}

/** `method` + `params` for 2captcha-compatible services, or a whole createTask `task` object. */
export interface RawTask {
  type: 'raw';
  /** The v1 `method`. */
  method?: string;
  /** The v1 parameters besides `key` and `method`. */
  params?: Record<string, string>;
  /** A createTask `task` object, with its `type`. */
  task?: Record<string, unknown>;
}

/** The answer of a `raw` task, by name (`Solution.answer`). */
export interface RawTaskAnswer {
  /** The answer as the worker typed it. */
  text: string;
}

/** Amazon AWS WAF: the `aws-waf-token` cookie from `window.gokuProps` (`key`, `iv`, `context`). */
export interface AmazonWafTask {
  type: 'amazon_waf';
  /** The `key` of `window.gokuProps`. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The `iv` of `window.gokuProps`. */
  iv: string;
  /** The `context` of `window.gokuProps`. */
  context: string;
  /** The `challenge.js` URL on the page. */
  challengeScript?: string;
  /** The `captcha.js` URL on the page. */
  captchaScript?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `amazon_waf` task, by name (`Solution.answer`). */
export interface AmazonWafAnswer {
  /** The `aws-waf-token` cookie's value. */
  cookie: string;
  /** 2captcha's `captcha_voucher`, where given. */
  captchaVoucher?: string;
}

/** DataDome's slider or interstitial: the `datadome` cookie, through your proxy and user agent. */
export interface DataDomeTask {
  type: 'datadome';
  /** The `src` of the captcha's iframe (its `t` must be `fe`). */
  captchaUrl: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The browser's user agent: the answer is bound to it. */
  userAgent: string;
  /** The proxy the service loads the page through: the answer is bound to its IP. */
  proxy: TaskProxy;
  /** Your current `datadome=...` cookie (CapMonster needs it). */
  cookie?: string;
}

/** The answer of a `datadome` task, by name (`Solution.answer`). */
export interface DataDomeAnswer {
  /** The `datadome` cookie to send. */
  cookie: string;
}

/** MTCaptcha. */
export interface MtCaptchaTask {
  type: 'mtcaptcha';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `mtcaptcha` task, by name (`Solution.answer`). */
export interface MtCaptchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Friendly Captcha. */
export interface FriendlyCaptchaTask {
  type: 'friendly_captcha';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The URL of the widget's script (`site.min.js`); CapMonster needs it. */
  apiGetLib?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `friendly_captcha` task, by name (`Solution.answer`). */
export interface FriendlyCaptchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Prosopo Procaptcha. */
export interface ProsopoTask {
  type: 'prosopo';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `prosopo` task, by name (`Solution.answer`). */
export interface ProsopoAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** ALTCHA proof of work: its challenge as JSON, or the URL it is fetched from. */
export interface AltchaTask {
  type: 'altcha';
  /** The page the challenge is on. */
  pageUrl: string;
  /** The challenge object, as JSON text. */
  challengeJson?: string;
  /** The URL the widget fetches its challenge from. */
  challengeUrl?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `altcha` task, by name (`Solution.answer`). */
export interface AltchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Tencent (TenDI) captcha, by its `app_id`. */
export interface TencentTask {
  type: 'tencent';
  /** The widget's `appId`. */
  appId: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `tencent` task, by name (`Solution.answer`). */
export interface TencentAnswer {
  /** `ticket`. */
  ticket: string;
  /** `randstr`. */
  randstr: string;
}

/** CutCaptcha. */
export interface CutCaptchaTask {
  type: 'cutcaptcha';
  /** The page's `CUTCAPTCHA_MISERY_KEY`. */
  miseryKey: string;
  /** The `data-apikey` of the widget. */
  apiKey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `cutcaptcha` task, by name (`Solution.answer`). */
export interface CutCaptchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Lemin cropped captcha. */
export interface LeminTask {
  type: 'lemin';
  /** The captcha's id. */
  captchaId: string;
  /** The id of the widget's `div`. */
  divId: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The Lemin API server the page uses. */
  apiServer?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `lemin` task, by name (`Solution.answer`). */
export interface LeminAnswer {
  /** `answer`. */
  answer: string;
  /** `challenge_id`. */
  challengeId: string;
}

/** KeyCaptcha, by the page's four `s_s_c_*` values. */
export interface KeyCaptchaTask {
  type: 'keycaptcha';
  /** `s_s_c_user_id`, a number. */
  sSCUserId: number;
  /** `s_s_c_session_id`. */
  sSCSessionId: string;
  /** `s_s_c_web_server_sign`. */
  sSCWebServerSign: string;
  /** `s_s_c_web_server_sign2`. */
  sSCWebServerSign2: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `keycaptcha` task, by name (`Solution.answer`). */
export interface KeyCaptchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Capy puzzle. */
export interface CapyTask {
  type: 'capy';
  /** The `captchakey` of the page. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The Capy API server the page loads its script from (`https://jp.api.capy.me/`, 2captcha's default). */
  apiServer?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `capy` task, by name (`Solution.answer`). */
export interface CapyAnswer {
  /** `captchakey`. */
  captchakey: string;
  /** `challengekey`. */
  challengekey: string;
  /** `answer`. */
  answer: string;
}

/** CyberSiARA slider. */
export interface CyberSiaraTask {
  type: 'cybersiara';
  /** The `MasterUrlId` of the page's request to `API/CyberSiara/GetCyberSiara`. */
  masterUrlId: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The browser's user agent: the answer is bound to it. */
  userAgent: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `cybersiara` task, by name (`Solution.answer`). */
export interface CyberSiaraAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Yandex SmartCaptcha. */
export interface YandexSmartTask {
  type: 'yandex_smart';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `yandex_smart` task, by name (`Solution.answer`). */
export interface YandexSmartAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** CaptchaFox, through your proxy and user agent. */
export interface CaptchaFoxTask {
  type: 'captchafox';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The browser's user agent: the answer is bound to it. */
  userAgent: string;
  /** The proxy the service loads the page through: the answer is bound to its IP. */
  proxy: TaskProxy;
}

/** The answer of a `captchafox` task, by name (`Solution.answer`). */
export interface CaptchaFoxAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** atbCAPTCHA (aisecurius). */
export interface AtbCaptchaTask {
  type: 'atb_captcha';
  /** The widget's `appId`. */
  appId: string;
  /** The widget's `apiServer`. */
  apiServer: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `atb_captcha` task, by name (`Solution.answer`). */
export interface AtbCaptchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** VK's captcha (`not_robot_captcha`), through your proxy and user agent. */
export interface VkCaptchaTask {
  type: 'vk_captcha';
  /** The `redirect_uri` of the captcha page. */
  redirectUri: string;
  /** The browser's user agent: the answer is bound to it. */
  userAgent: string;
  /** The proxy the service loads the page through: the answer is bound to its IP. */
  proxy: TaskProxy;
}

/** The answer of a `vk_captcha` task, by name (`Solution.answer`). */
export interface VkCaptchaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Binance's captcha, by its `bizId` and `validateId`. */
export interface BinanceTask {
  type: 'binance';
  /** The `bizId` (e.g. `register`). */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The `validateId` of the page. */
  validateId: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `binance` task, by name (`Solution.answer`). */
export interface BinanceAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** NetEase Yidun. */
export interface YidunTask {
  type: 'yidun';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The `load.min.js` URL of the page. */
  yidunGetLib?: string;
  /** The API server's host. */
  yidunApiServerSubdomain?: string;
  /** The Enterprise `challenge`. */
  challenge?: string;
  /** The Enterprise `hcg`. */
  hcg?: string;
  /** The Enterprise `hct` (a timestamp in ms, as text: JavaScript numbers cannot hold every one exactly). */
  hct?: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `yidun` task, by name (`Solution.answer`). */
export interface YidunAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Basilisk (FaucetPay's captcha). */
export interface BasiliskTask {
  type: 'basilisk';
  /** The site's key for the widget. */
  sitekey: string;
  /** The page the challenge is on. */
  pageUrl: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `basilisk` task, by name (`Solution.answer`). */
export interface BasiliskAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** F5 TSPD (Shape) interstitial, through your proxy. */
export interface TspdTask {
  type: 'tspd';
  /** The page the challenge is on. */
  pageUrl: string;
  /** The `TS...` cookies the page set, as sent. */
  tspdCookie: string;
  /** The challenge page's HTML, base64. */
  htmlPageBase64: string;
  /** The proxy the service loads the page through: the answer is bound to its IP. */
  proxy: TaskProxy;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
}

/** The answer of a `tspd` task, by name (`Solution.answer`). */
export interface TspdAnswer {
  /** The cookies to send. */
  cookie: string;
}

/** Alibaba Cloud (Aliyun) captcha. */
export interface AlibabaTask {
  type: 'alibaba';
  /** The page the challenge is on. */
  pageUrl: string;
  /** The widget's `SceneId`. */
  sceneId: string;
  /** The widget's `prefix`. */
  prefix: string;
  /** `UserId`. */
  userId?: string;
  /** `UserUserId`. */
  userUserId?: string;
  /** `verifyType`. */
  verifyType?: string;
  /** `region`. */
  region?: string;
  /** `UserCertifyId`. */
  userCertifyId?: string;
  /** The `AliyunCaptcha.js` URL. */
  apiGetLib?: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `alibaba` task, by name (`Solution.answer`). */
export interface AlibabaAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** HUMAN (HUNT) challenge. */
export interface HuntTask {
  type: 'hunt';
  /** The page the challenge is on. */
  pageUrl: string;
  /** The `api.js` URL of the page. */
  apiGetLib: string;
  /** The page's meta token. */
  data?: string;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `hunt` task, by name (`Solution.answer`). */
export interface HuntAnswer {
  /** The token to submit with the form. */
  token: string;
}

/** Temu's puzzle: the background image and its three pieces. */
export interface TemuImageTask {
  type: 'temu';
  /** The image, base64. */
  body: string;
  /** The first piece, base64. */
  part1: string;
  /** The second piece, base64. */
  part2: string;
  /** The third piece, base64. */
  part3: string;
}

/** The answer of a `temu` task, by name (`Solution.answer`). */
export interface TemuImageAnswer {
  /** Where each piece goes. */
  points: Array<{ x: number; y: number }>;
}

/** An image grid: which cells match the instructions (reCAPTCHA-style). */
export interface GridTask {
  type: 'grid';
  /** The image, base64. */
  body: string;
  /** Rows of the grid. */
  rows?: number;
  /** Columns of the grid. */
  cols?: number;
  /** The worker may answer that no cell matches. */
  canSkip?: boolean;
  /** Language code of the instructions (`en`, `ru`, ...). */
  lang?: string;
  /** Instructions shown to the worker. */
  textinstructions?: string;
  /** An image (base64) with instructions shown to the worker. */
  imginstructions?: string;
}

/** The answer of a `grid` task, by name (`Solution.answer`). */
export interface GridTaskAnswer {
  /** The matching cells, as the service lists them (`click:3/1/6`). */
  cells: string;
}

/** Click points on an image, as the instructions ask. */
export interface CoordinatesTask {
  type: 'coordinates';
  /** The image, base64. */
  body: string;
  /** Language code of the instructions (`en`, `ru`, ...). */
  lang?: string;
  /** Instructions shown to the worker. */
  textinstructions?: string;
  /** An image (base64) with instructions shown to the worker. */
  imginstructions?: string;
}

/** The answer of a `coordinates` task, by name (`Solution.answer`). */
export interface CoordinatesTaskAnswer {
  /** The points, `[{x, y}, ...]`, in image pixels. */
  points: Array<{ x: number; y: number }>;
}

/** Draw around an object on an image (a bounding line), as the instructions ask. */
export interface CanvasTask {
  type: 'canvas';
  /** The image, base64. */
  body: string;
  /** Instructions shown to the worker. */
  textinstructions: string;
  /** The worker may answer that nothing matches. */
  canSkip?: boolean;
  /** Language code of the instructions (`en`, `ru`, ...). */
  lang?: string;
  /** An image (base64) with instructions shown to the worker. */
  imginstructions?: string;
}

/** The answer of a `canvas` task, by name (`Solution.answer`). */
export interface CanvasTaskAnswer {
  /** The line's points. */
  points: Array<{ x: number; y: number }>;
}

/** Rotate an image upright: the angle to turn it by. */
export interface RotateTask {
  type: 'rotate';
  /** The image, base64. */
  body: string;
  /** The step of one turn, in degrees. */
  angle?: number;
  /** Language code of the instructions (`en`, `ru`, ...). */
  lang?: string;
  /** Instructions shown to the worker. */
  textinstructions?: string;
  /** An image (base64) with instructions shown to the worker. */
  imginstructions?: string;
}

/** The answer of a `rotate` task, by name (`Solution.answer`). */
export interface RotateTaskAnswer {
  /** The angle, in degrees. */
  angle: number;
}

/** An audio CAPTCHA: the words in an mp3 clip. */
export interface AudioTask {
  type: 'audio';
  /** The clip (mp3), base64. */
  body: string;
  /** The clip's language. */
  lang: 'en' | 'ru' | 'de' | 'el' | 'pt' | 'fr';
}

/** The answer of a `audio` task, by name (`Solution.answer`). */
export interface AudioTaskAnswer {
  /** The answer as the worker typed it. */
  text: string;
}

/** VK's image captcha: the steps of the slider. */
export interface VkImageTask {
  type: 'vk_image';
  /** The image, base64. */
  body: string;
  /** The `steps` array of the captcha, as JSON text. */
  steps: string;
}

/** The answer of a `vk_image` task, by name (`Solution.answer`). */
export interface VkImageAnswer {
  /** The answer as the worker typed it. */
  text: string;
}

/** Cloudflare's challenge page: the `cf_clearance` cookie, bound to your proxy's IP and the user agent it was solved with. */
export interface CloudflareChallengeTask {
  type: 'cloudflare_challenge';
  /** The page the challenge is on. */
  pageUrl: string;
  /** The proxy the service loads the page through: the answer is bound to its IP. */
  proxy: TaskProxy;
  /** The browser's user agent, where the answer is bound to it. */
  userAgent?: string;
  /** The challenge page's HTML as your proxy was served it (status 403, "Just a moment..."); CapMonster needs it. */
  html?: string;
  /** The Turnstile site key on the challenge page (CapMonster needs it). */
  sitekey?: string;
}

/** The answer of a `cloudflare_challenge` task, by name (`Solution.answer`). */
export interface CloudflareChallengeAnswer {
  /** The `cf_clearance` cookie's value: send it with the same proxy IP and user agent. */
  cookie: string;
  /** The user agent the cookie is bound to, where the service returns one (CapSolver); elsewhere the one you sent. */
  userAgent?: string;
}

/** A reCAPTCHA v2 image challenge: which cells of the grid show the object it names. */
export interface RecaptchaClassificationTask {
  type: 'recaptcha_classification';
  /** The challenge's image (the whole grid, or one tile), base64. */
  image: string;
  /** The object's code as reCAPTCHA names it in the challenge (`/m/015qff`: traffic lights). */
  question: string;
  /** The grid the image is cut into (CapMonster needs it). */
  grid?: '3x3' | '4x4' | '1x1';
  /** The page the challenge is on, to help the solver. */
  pageUrl?: string;
}

/** The answer of a `recaptcha_classification` task, by name (`Solution.answer`). */
export interface RecaptchaClassificationAnswer {
  /** The 0-based cells that show the object, left to right, top to bottom (`[]`: none). */
  cells: number[];
}

/** An hCaptcha image challenge: which of its images match the question. */
export interface HcaptchaClassificationTask {
  type: 'hcaptcha_classification';
  /** The challenge's images, base64, in order (at most 18). */
  images: string[];
  /** The question, in English (`Please click each image containing a mountain`). */
  question: string;
  /** The example image shown with the question, base64. */
  exampleImage?: string;
  /** The page the challenge is on, to help the solver. */
  pageUrl?: string;
  /** The browser's user agent, to help the solver. */
  userAgent?: string;
}

/** The answer of a `hcaptcha_classification` task, by name (`Solution.answer`). */
export interface HcaptchaClassificationAnswer {
  /** The 0-based positions of the images that match (`[]`: none). */
  cells: number[];
}

/** A FunCaptcha image challenge: which of its tiles answers the question. */
export interface FuncaptchaClassificationTask {
  type: 'funcaptcha_classification';
  /** The challenge's image (all its tiles), base64. */
  image: string;
  /** The question, in English (`Pick the image that is the correct way up`). */
  question: string;
  /** The page the challenge is on, to help the solver. */
  pageUrl?: string;
  /** The browser's user agent, to help the solver. */
  userAgent?: string;
}

/** The answer of a `funcaptcha_classification` task, by name (`Solution.answer`). */
export interface FuncaptchaClassificationAnswer {
  /** The 0-based positions of the tiles that answer it. */
  cells: number[];
}

/** An anti-captcha AntiGate template run by a worker: the browser session it ends with. */
export interface AntiGateTask {
  type: 'antigate';
  /** The page the challenge is on. */
  pageUrl: string;
  /** The template's name in anti-captcha's catalogue (or one of yours). */
  templateName: string;
  /** The template's variables and their values. */
  variables: Record<string, unknown>;
  /** Domains whose cookies and localStorage to collect. */
  domainsOfInterest?: string[];
  /** A proxy the service's workers load the page through. */
  proxy?: TaskProxy;
}

/** The answer of a `antigate` task, by name (`Solution.answer`). */
export interface AntiGateAnswer {
  /** The page the template ended on. */
  url: string;
  /** That page's domain. */
  domain?: string;
  /** The cookies of that page. */
  cookies?: Record<string, unknown>;
  /** The localStorage values of that page. */
  localStorage?: Record<string, unknown>;
  /** The worker's browser fingerprint. */
  fingerprint?: Record<string, unknown>;
}

/**
 * A task. The core checks it and names the bad field (`InvalidTask.field`); field names may also be
 * written in snake_case (`page_url`).
 */
export type Task =
  | ImageTask
  | RecaptchaV2Task
  | RecaptchaV3Task
  | TurnstileTask
  | GeeTestV3Task
  | GeeTestV4Task
  | FunCaptchaTask
  | HCaptchaTask
  | TextCaptchaTask
  | RawTask
  | AmazonWafTask
  | DataDomeTask
  | MtCaptchaTask
  | FriendlyCaptchaTask
  | ProsopoTask
  | AltchaTask
  | TencentTask
  | CutCaptchaTask
  | LeminTask
  | KeyCaptchaTask
  | CapyTask
  | CyberSiaraTask
  | YandexSmartTask
  | CaptchaFoxTask
  | AtbCaptchaTask
  | VkCaptchaTask
  | BinanceTask
  | YidunTask
  | BasiliskTask
  | TspdTask
  | AlibabaTask
  | HuntTask
  | TemuImageTask
  | GridTask
  | CoordinatesTask
  | CanvasTask
  | RotateTask
  | AudioTask
  | VkImageTask
  | CloudflareChallengeTask
  | RecaptchaClassificationTask
  | HcaptchaClassificationTask
  | FuncaptchaClassificationTask
  | AntiGateTask;

/** The camelCase spelling of the kinds whose name has an underscore, also taken as per-kind option keys. */
export type TaskTypeCamel =
  | 'recaptchaV2'
  | 'recaptchaV3'
  | 'geetestV3'
  | 'geetestV4'
  | 'amazonWaf'
  | 'friendlyCaptcha'
  | 'yandexSmart'
  | 'atbCaptcha'
  | 'vkCaptcha'
  | 'vkImage'
  | 'cloudflareChallenge'
  | 'recaptchaClassification'
  | 'hcaptchaClassification'
  | 'funcaptchaClassification';

/** One duration (ms) per task kind: an object of kinds (those left out keep their value) or one number for all. Keys are the kinds' names (`recaptcha_v2`); their camelCase spelling (`recaptchaV2`) is taken too. */
export type KindMs = number | Partial<Record<TaskType | TaskTypeCamel, number>>;
// </generated: kinds>

/** Earlier names of task types, kept for code that imports them. */
export type TextTask = TextCaptchaTask;
export type GeetestV3Task = GeeTestV3Task;
export type GeetestV4Task = GeeTestV4Task;
export type FuncaptchaTask = FunCaptchaTask;
export type HcaptchaTask = HCaptchaTask;

/** One item of a batch: a task, or a task with its own labels and key (its labels win over the call's). */
export type BatchItem = Task | { task: Task; labels?: Labels; key?: string; ttlMs?: number };

/** Labels: strings you choose, copied into a task's journal entry and DLQ record. Keys are kept as written. */
export type Labels = Record<string, string>;

// ---------------------------------------------------------------- answers

/** The answer. */
export interface Solution {
  /** The token, or the recognised text. */
  text: string;
  /** Every other value the provider returned (GeeTest validate/seccode, a userAgent…); `{}` when none. */
  fields: Record<string, unknown>;
  /** The provider's id of the task, for `client.report`; `null` when it gave none. */
  providerTaskId: string | null;
  /** The provider that solved it, as the client names it (where `reportSolution` goes). */
  provider?: string;
  /** What it cost: as the provider reported it, else the configured `price`. */
  cost?: number;
  /** The answer's values by the names its kind declares (`cookie`, `points`…): see the `…Answer` types. */
  answer?: Record<string, unknown>;
  /** When it was solved, in Unix milliseconds. */
  solvedAt: number | null;
  /** When it stops being good, in Unix milliseconds (its kind's declared life after `solvedAt`); `null` for an answer that does not expire (a recognised text). Past it, an answer is never handed over: it is a dead letter `TTLExpired`. */
  expiresAt: number | null;
  /** The fields a page added to the task (its `userAgent`, `cookies`) that the provider had no place for and the answer is not bound to, so they were left out of what was sent; absent when none. */
  leftOut?: string[];
}

/** One finished task of a batch (`solveStream`, `solveMany`). */
export type SolveResult = {
  /** Its position in the input. */
  index: number;
  /** Its record id; `null` if it was never accepted (an invalid task). */
  id: string | null;
  key: string | null;
  labels: Labels;
} & ({ ok: true; solution: Solution } | { ok: false; error: CaptchaDlqError });

// ---------------------------------------------------------------- records

export type ErrorClass =
  | 'not_ready'
  | 'transient'
  | 'retry_after'
  | 'task_terminal'
  | 'fix_input'
  | 'account_terminal'
  | 'cancelled'
  | 'application';

export type RecordState = 'ready' | 'leased' | 'parked';

export interface HistoryEntry {
  at: string;
  phase: 'submit' | 'poll' | 'deadline' | 'recover' | 'cancel' | 'application' | 'import' | 'edit';
  error: string;
  providerTaskId?: string;
  httpStatus?: number;
}

/** A dead-letter record (schema 1; export files hold the same, in snake_case). Never holds the API key. */
export interface DeadLetterRecord {
  schema: number;
  /** A ULID; the id the task had in the journal. */
  id: string;
  task: Record<string, unknown> & { type: TaskType };
  provider: string;
  /** A provider code (`ERROR_CAPTCHA_UNSOLVABLE`) or a system reason (`Timeout`, `Network`, `Cancelled`…). */
  reason: string;
  description: string;
  class: ErrorClass;
  /** Provider submissions over the task's whole life. */
  attempts: number;
  /** Times it was taken out of the DLQ and tried again. */
  replays: number;
  history: HistoryEntry[];
  /** RFC 3339. */
  firstFailedAt: string;
  /** RFC 3339. */
  deadLetteredAt: string;
  labels: Labels;
  state: RecordState;
  /** Leases handed out for this record. */
  deliveries: number;
  parkedReason?: string;
  /** A paid answer that was not handed over, kept for the record (a `TTLExpired` answer past its life, with its `cost`). */
  solution?: { text: string; cost?: number; solvedAt?: number; expiresAt?: number } & Record<string, unknown>;
}

/** A task in flight, as the journal holds it. */
export interface JournalEntry {
  id: string;
  task: Record<string, unknown> & { type: TaskType };
  provider: string;
  labels: Labels;
  providerTaskId?: string;
  attempts: number;
  replays: number;
  history: HistoryEntry[];
  acceptedAt: string;
  updatedAt: string;
  replayOf?: string;
  owner?: string;
  key?: string;
  solution?: Solution;
}

/** Which records an operation applies to; what is left out matches everything. Unknown fields are refused. */
export interface Filter {
  ids?: string[];
  reasons?: string[];
  classes?: ErrorClass[];
  states?: RecordState[];
  sitekey?: string;
  pageHost?: string;
  /** Every pair must be on the record; keys match exactly as written (`{ jobId: 'x' }`). */
  labels?: Labels;
  /** A `Date` or RFC 3339 text. */
  deadLetteredBefore?: Date | string;
  deadLetteredAfter?: Date | string;
}

export interface StoreStats {
  total: number;
  ready: number;
  leased: number;
  parked: number;
  dropped: number;
  completed: number;
  abandoned: number;
  oldestDeadLetteredAt: string | null;
  /** Tasks in the in-flight journal. */
  inFlight: number;
}

export interface Bucket {
  key: string;
  count: number;
}

export interface Analysis {
  computedAt: string;
  records: number;
  stats: StoreStats;
  byReason: Bucket[];
  byClass: Bucket[];
  bySitekey: Bucket[];
  byPageHost: Bucket[];
  byHour: Bucket[];
  byProvider: Bucket[];
  oldestAgeSeconds: number | null;
  repeatFailureRate: number | null;
  replay: { completed: number; abandoned: number; recoveredRatio: number | null };
}

export interface SettledKey {
  key: string;
  id: string;
  outcome: 'solved' | 'dead_lettered';
  at: string;
}

// ---------------------------------------------------------------- replay and recover

export interface ReplayReport {
  /** Records leased from the store. */
  received: number;
  /** Records submitted again. */
  retried: number;
  recovered: number;
  failedAgain: number;
  parked: number;
  skipped: number;
}

/** One replayed record. */
export type ReplayItem = { id: string; labels: Labels } & (
  | { outcome: 'recovered'; solution: Solution }
  | { outcome: 'failed_again'; record: DeadLetterRecord; parked: boolean }
  | { outcome: 'parked'; reason: string }
  | { outcome: 'skipped'; why: string }
  | { outcome: 'error'; error: CaptchaDlqError }
);

export interface ReplayOptions {
  /** Records with these reasons (review classes too: naming records is an explicit request). */
  reasons?: string[];
  ids?: string[];
  filter?: Filter;
  /** At most this many records. Default 100. */
  limit?: number;
  /** Records started per second at most. Default: all at once. */
  perSecond?: number;
  /** Who the audit trail records the replay as (default `'api'`). */
  operator?: string;
}

/** An answer a collect-all call handed over (its record or journal entry is gone). `key`: a recovered task's key; replayed records have none. */
export interface Answer {
  id: string;
  key: string | null;
  labels: Labels;
  solution: Solution;
}

/** What `replay()` returns (the client's `ReplayResult`, the same in every language). */
export interface ReplayResult {
  report: ReplayReport;
  /** The answers, in the order they came. */
  solved: Answer[];
  /** Every record's outcome, in the order they came. */
  items: ReplayItem[];
}

export interface RecoverOptions {
  /** Finish the tasks (poll, resubmit, hand answers over); `false` dead-letters them as `Interrupted`. Default true. */
  resume?: boolean;
  /** Solve again (a new, paid submission) each task whose answer is past its life, instead of dead-lettering it as `TTLExpired` with its answer and cost. Default false. */
  resolveExpired?: boolean;
}

/** One recovered task. */
export type RecoverItem = { id: string; key: string | null; labels: Labels } & (
  | { ok: true; solution: Solution }
  | { ok: false; error: CaptchaDlqError }
);

export interface RecoverSummary {
  /** Journal entries taken over. */
  found: number;
  /** Entries left to clients that are alive. */
  skippedLive: number;
  solved: number;
  deadLettered: number;
  /** Of `deadLettered`: answers past their life, kept in their `TTLExpired` dead letter. */
  expired: number;
}

/** What `recover()` returns (the client's `RecoverResult`, the same in every language). */
export interface RecoverResult {
  report: RecoverSummary;
  /** The answers, in the order they came. */
  solved: Answer[];
  /** The tasks that failed, each with its error. */
  failed: Array<Extract<RecoverItem, { ok: false }>>;
}

export interface ReplayStream extends AsyncGenerator<ReplayItem, void, undefined> {
  /** The counts so far; final once the iteration ended. `null` before it started. */
  report(): ReplayReport | null;
}

export interface RecoverStream extends AsyncGenerator<RecoverItem, void, undefined> {
  /** The counts so far; final once the iteration ended. `null` before it started. */
  summary(): RecoverSummary | null;
}

// ---------------------------------------------------------------- events

/** Engine and driver events (`{ event, ...fields }`), camelCase fields. */
export type CaptchaEvent =
  | { event: 'accepted'; job: number; id: string }
  | { event: 'submitted'; job: number; attempt: number; providerTaskId: string }
  | { event: 'polled'; tasks: number }
  | { event: 'retrying'; job: number; code: string; class: ErrorClass; delayMs: number; attempt: number }
  | { event: 'solved'; job: number; attempts: number; elapsedMs: number }
  | { event: 'dead_lettered'; job: number; id: string; reason: string; class: ErrorClass; attempts: number }
  | { event: 'recovered'; job: number; id: string; resumedPolling: boolean }
  | { event: 'circuit_opened'; cause: string; until: string | null }
  | { event: 'account_hold'; code: string; until: string }
  | { event: 'circuit_half_open' }
  | { event: 'circuit_closed' }
  | { event: 'concurrency_changed'; limit: number }
  | { event: 'paused'; scope: 'submits' | 'polls'; code: string; until: string }
  | { event: 'batch_polling_disabled'; reason: string }
  | { event: 'store_unavailable'; error: string }
  | { event: 'store_available'; afterMs: number }
  | { event: 'store_gave_up'; what: string; error: string };

// ---------------------------------------------------------------- options

export type Backoff =
  /** `random(0, min(capMs, baseMs·2ⁿ))`. The default: `{ kind: 'full_jitter', baseMs: 1000, capMs: 60000 }`. */
  | { kind: 'full_jitter'; baseMs: number; capMs: number }
  /** `min(capMs, random(baseMs, previous·3))`. */
  | { kind: 'decorrelated'; baseMs: number; capMs: number }
  | { kind: 'fixed'; delayMs: number };

export interface RetryOptions {
  /** Provider submissions per task before it is dead-lettered. Default 4 (the seeds' `max_retries + 1`). */
  maxAttempts?: number;
  /** Consecutive transient failures (5xx, bad body, network) of one request before the task is dead-lettered. Default 5. */
  maxRequestRetries?: number;
  /** Consecutive "slow down" answers (`ERROR_NO_SLOT_AVAILABLE`…) before the task is dead-lettered. Default 10. */
  maxRetryAfterRetries?: number;
  /** Wait before retrying a failed submission. Default full jitter, base 1 s, cap 60 s (fewest collisions). */
  backoff?: Backoff;
  /** The least wait before retrying a transient failure, so a failing service is never hammered. Default 250. */
  transientMinDelayMs?: number;
  /** Whole-task deadline, from acceptance to answer. Default 600000 (10 min). */
  taskDeadlineMs?: number;
  /** Timeout of one HTTP exchange. Default 30000. */
  requestTimeoutMs?: number;
  /** Journal entries older than this on restart are dead-lettered as `Interrupted`, not resumed. Default 600000. */
  recoverMaxAgeMs?: number;
}

/**
 * When to poll. By default an attempt is polled first after `firstPollMs` of its kind, then at an interval
 * stretched so that `maxPolls` polls reach `giveUpMs` (the service's working time plus 20 s), never closer than
 * `minIntervalMs`. The defaults are the provider's documented figures (docs/providers.md).
 */
export interface PollingOptions {
  /** First poll after submission, per kind. captchaai/2captcha: 15000 for reCAPTCHA v2, 10000 for v3 and Turnstile, 5000 for images (their "wait 5 s, 10–20 s for reCAPTCHA"). */
  firstPollMs?: KindMs;
  /** A fixed interval for every kind instead of the stretched one (mocks, self-hosted solvers). Default 0 (stretch). */
  intervalMs?: number;
  /** The least interval between two polls of one task. captchaai/2captcha: 5000 (their limit). */
  minIntervalMs?: number;
  /** Per kind, the attempt is given up (and the task submitted again) this long after submission. captchaai/2captcha: 320000 for reCAPTCHA v2, 110000 otherwise. */
  giveUpMs?: KindMs;
  /** Polls per submission at most. captchaai/2captcha: 20 (their per-task limit). */
  maxPolls?: number;
  /** Poll many tasks in one request where the provider can. Default true. */
  batch?: boolean;
  /** A task due within this window of a poll request rides along with it. Default 2500. */
  coalesceMs?: number;
}

export interface RateOptions {
  /** Submissions per second at most. captchaai/2captcha: 16 (2captcha bans more than 60 in 3 s); anti-captcha, CapSolver, CapMonster: 10. */
  submitsPerSecond?: number;
  /**
   * Tasks submitted and not finished, at most. Default 1000: a task in flight costs only a share of a batched
   * poll, and a service that runs out of workers says so (`ERROR_NO_SLOT_AVAILABLE`: halved, then grown back).
   */
  maxInFlight?: number;
}

export interface CircuitOptions {
  /** Request outcomes remembered for the failure ratio. Default 20. */
  window?: number;
  /** Outcomes needed before the ratio can open the circuit. Default 10. */
  minCalls?: number;
  /** Default 0.5. */
  failureRatio?: number;
  /** How long the circuit stays open before one probe. Default 30000. */
  breakMs?: number;
  /** Transport failures in a row after which a provider that never answered counts as unreachable. Default 3. */
  unreachableAfterFailures?: number;
  /** For a provider that did answer: how long failures in a row must last. Default 30000. */
  unreachableAfterMs?: number;
  /**
   * Hold mode, on by default: after a zero balance, queued and new tasks wait this long at most for a top-up
   * (one balance check for the whole fleet every `accountProbeMs`; `captcha-dlq accounts resume` or the
   * dashboard's Fleet page end it at once). Default 3600000 (an hour); 0: dead-lettered at once.
   */
  accountHoldMs?: number;
  /** Hold for the other account errors too (a refused key, an IP not allowed). Default false: they fail at once. */
  holdAccountErrors?: boolean;
  /** While holding, the balance is checked this often. Default 60000 (2captcha: wait 60 s after `ERROR_ZERO_BALANCE`). */
  accountProbeMs?: number;
}

export interface ReplayPolicyOptions {
  /** Classes replayed without being named. Default `['transient', 'retry_after', 'task_terminal']`; the others wait for review. */
  autoClasses?: ErrorClass[];
  /** A record whose task had this many attempts in total is parked, not replayed. Default 6. */
  parkAfterAttempts?: number;
  /** Attempts granted to one replay (capped by `parkAfterAttempts`). Default 2. */
  replayAttempts?: number;
  /** How long a replay holds a record before another may take it. Default 600. */
  leaseSeconds?: number;
}

/** Where a client's spans go (`traces`). */
export interface TraceOptions {
  /** The collector's OTLP/HTTP URL; one without a path gets `/v1/traces` (`http://127.0.0.1:4318`). */
  otlpEndpoint: string;
  /** Sent with every export (a collector's token); never shown. */
  headers?: Record<string, string>;
  /** The spans' `service.name`. Default `captcha-dlq`. */
  serviceName?: string;
  /** Default `'http/protobuf'`. */
  protocol?: 'http/protobuf' | 'http/json';
}

export interface FleetOptions {
  /** Default true; false keeps this client's limits its own, as if it were alone. */
  enabled?: boolean;
  /**
   * Default true: while in a fleet, this client takes over the tasks of a member whose heartbeat
   * stopped (a killed process) and finishes them (polling the provider; never submitting a task
   * the provider has again). Their answers go to `onAdopted`, or stay in the journal for `recover()`.
   */
  adopt?: boolean;
  /** Whose `budget` it is: `'fleet'` (default: every client on the store and account) or `'process'`. */
  budget?: 'fleet' | 'process';
}

/** What an alert reports (`AlertOptions.webhooks[].events`). */
export type AlertKind = 'dead_letter_rate' | 'new_reason' | 'account_error' | 'budget' | 'circuit_open' | 'store_gave_up';

/** One receiver of alerts. */
export interface WebhookOptions {
  /** `https://` (`http://` only to this machine unless `allowInsecureHttp`). */
  url: string;
  /**
   * Signs each request: `X-Captcha-Dlq-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`;
   * receivers check it with {@link verifyWebhook}.
   */
  secret?: string;
  /** The kinds it is sent; default every kind. */
  events?: AlertKind[];
  /** `json` (default) or `slack` (`{"text": …}`). */
  format?: 'json' | 'slack';
}

/** Webhook alerts, signed (the browser posts them through `fetch`; the webhook must send CORS headers). */
export interface AlertOptions {
  webhooks: WebhookOptions[];
  /** Dead letters in one minute above which `dead_letter_rate` is sent. Default 100. */
  deadLettersPerMinute?: number;
  /** Fraction of `budget` whose spending sends `budget`. Default 0.8. */
  budgetFraction?: number;
  /** A (kind, subject) quiet until now is sent this long after its first event, with every event of it meanwhile counted. Default 500. */
  gatherMs?: number;
  /** After a message, a (kind, subject)'s events within this time go together as one message with their count. Default 60000. */
  coalesceMs?: number;
  /** Attempts per message (failures, timeouts, 5xx are tried again with backoff). Default 5. */
  attempts?: number;
  /** One delivery attempt's timeout. Default 5000. */
  timeoutMs?: number;
  /** Alerts waiting to be processed; beyond it an alert is dropped and counted. Default 1024. */
  queue?: number;
}

/** Retention limits of the DLQ, applied every `intervalMs`; evicted records are archived first when `archive` is set. */
export interface RetentionOptions {
  maxAgeMs?: number;
  /** Beyond this many records, the oldest ready or parked ones are evicted (never a leased one). */
  maxCount?: number;
  /**
   * Node: a JSONL file evicted records are appended to (and synced) before they are removed. Browser: a function
   * handed each batch as redacted JSONL with its count before it is removed (a throw or rejection removes nothing).
   */
  archive?: string | ((jsonl: string, count: number) => void | Promise<void>);
  /** Default 60000. */
  intervalMs?: number;
}

export interface StoreCallOptions {
  /** One store call that takes longer has failed (a hung store is reported within this). Default 5000. */
  timeoutMs?: number;
  /** How long a failing write is retried before the task fails with a store error. Default 60000. */
  retryForMs?: number;
  /** Store calls under way at once. Default 16. */
  concurrency?: number;
  /**
   * What a committed write survives: `'process'` (the process being killed; default) or `'power_loss'` (also a
   * power loss: a SQLite DLQ syncs every commit, writes that arrive together share one sync). Only a SQLite DLQ
   * takes `'power_loss'`; other stores (memory, Redis, IndexedDB, custom) refuse it with an `InvalidConfig`.
   */
  durability?: 'process' | 'power_loss';
}

/**
 * A DLQ store of your own (docs/custom-store.md): rows in tables, kept as given. Each method may return its
 * answer or a promise of it; the lease rules, the journal and every check are the client's.
 */
export interface StoreObject {
  get(table: string, key: string): unknown | Promise<unknown>;
  scan(table: string): unknown[] | Promise<unknown[]>;
  /** Apply every op or none. */
  write(ops: Array<{ op: 'put'; table: string; key: string; row: unknown } | { op: 'delete'; table: string; key: string }>): unknown;
  /** Optional: resolve once this caller has the storage to itself (several processes sharing it). */
  lock?(): unknown;
  /** Optional: release the lock or withdraw a waiting `lock()`; also called when nothing is held, then a no-op. */
  unlock?(): unknown;
  /**
   * `true`: several processes share this store's storage (then `lock` and `unlock` are required). In Node the
   * clients on it form a fleet, keeping each provider account's schedule, pauses and budget in two more tables,
   * `fleet_accounts` and `fleet_owners`, on the clients' clocks (hosts sharing one keep their clocks in step).
   * The browser keeps no fleet ledger. Left out, `null` or `false`: one process's store; anything else is refused.
   */
  shared?: boolean | null;
}

/** One of several providers. */
export interface ProviderEntry {
  provider: string;
  apiKey: string;
  /** How records, solutions and events name it; default the preset's name. Unique in a client. */
  name?: string;
  baseUrl?: string;
  price?: number | Record<string, number>;
  /** This provider's software id for its developer programme, sent to it alone (CapSolver `appId`,
   * anti-captcha/CapMonster `softId`, 2captcha `soft_id`). */
  softId?: string;
  retry?: RetryOptions;
  polling?: PollingOptions;
  rate?: RateOptions;
  circuit?: CircuitOptions;
}

/** A served dashboard (Node only). */
export interface DashboardServer {
  readonly url: string;
  close(): Promise<void>;
}

export interface DashboardOptions {
  /** `host:port`, `:port` (loopback); default `127.0.0.1:8787`. Another address needs a `token`. */
  listen?: string;
  /** Hide and refuse every action. */
  readOnly?: boolean;
  /** At least 16 characters; required on every request when set. An operator named `default`. */
  token?: string;
  /** Named tokens: a viewer sees every page and changes nothing (403); an operator acts, and the audit trail
   * names them by their token's name. Tokens at least 16 characters, no two alike; names unique. */
  tokens?: DashboardToken[];
  liveIntervalMs?: number;
}

/** One named token of the dashboard. */
export interface DashboardToken {
  name: string;
  token: string;
  role: 'viewer' | 'operator';
}

/** What an operator did, as the audit trail keeps it (newest first from `dlq.audit()`). */
export interface AuditEntry {
  /** The store's number for the entry: 1, 2, 3… in the order they were written. */
  id: number;
  /** RFC 3339, when the entry was written (an intent: before the action; a result: when it ended). */
  at: string;
  /** A dashboard token's name, the CLI's `--as` (or `cli:user@host`), or an API caller's (`api` by default). */
  operator: string;
  action: 'replay' | 'purge' | 'park' | 'unpark' | 'import' | 'edit' | 'evict' | 'recover' | 'export_secrets' | 'cancel' | 'resume_accounts';
  /** Each action leaves its `intent` before it runs (count 0) and its `result` after. */
  stage: 'intent' | 'result';
  /** In a result, the id of its intent entry. */
  intent?: number;
  /** The records selected, in the filter's own field names as the store keeps them (`reasons`, `page_host`…);
   * null for an import. */
  filter: Record<string, unknown> | null;
  /** How many records it touched (so far, when it failed part way). */
  count: number;
  /** A park reason, a replay's counts. */
  detail: string;
  error: string | null;
}

/** A client's options. Unknown keys are refused, naming the key as written (`retry.maxAtempts`). */
export interface ClientOptions {
  /** Your solving service's API key (surrounding white space is dropped). Never shown in errors, events, records or inspections. */
  apiKey?: string;
  /** The provider's price per solved task (one number, or by task kind) where it reports no cost. */
  price?: number | Record<string, number>;
  /** Several providers, in place of `apiKey`/`provider`/`baseUrl`/`price`: each its own rate, circuit and balance. */
  providers?: ProviderEntry[];
  /** How tasks are spread over `providers`: `ordered` (failover in list order, the default), `fastest`, `cheapest`. */
  routing?: 'ordered' | 'fastest' | 'cheapest' | 'accepted';
  /** Try an unsolvable task at the next provider. */
  failoverOnUnsolvable?: boolean;
  /** Share of tasks `fastest` sends elsewhere to notice a provider that recovered. */
  routingExplore?: number;
  /** Stop submitting once this much was spent (`BudgetExhausted`, class `account_terminal`). */
  budget?: number;
  /**
   * A preset — `captchaai` (the default), `2captcha`, `rucaptcha`, `2captcha-v2`, `anti-captcha`, `capsolver`,
   * `capmonster` — or the base URL of a 2captcha-compatible service.
   */
  provider?: string;
  /** Send the provider's protocol to another host: your proxy, a self-hosted solver, the mock. `http://` only on loopback unless `allowInsecureHttp`. */
  baseUrl?: string;
  /**
   * Where the DLQ and the journal live. Node: a SQLite file path (default `captcha-dlq.sqlite` in the working
   * directory), `'memory'`, or a Redis URL (`redis://`, `rediss://`, `redis+cluster://`, `rediss+cluster://`, with `?namespace=`, `ca=`). Browser: see the package's README. Or a store object.
   */
  dlq?: string | StoreObject;
  retry?: RetryOptions;
  polling?: PollingOptions;
  rate?: RateOptions;
  circuit?: CircuitOptions;
  /** Seed of the retry jitter and record ids. Default 0: the OS's randomness. */
  seed?: number;
  replayPolicy?: ReplayPolicyOptions;
  /** Allow `http://` to a host other than this machine: the key then travels in clear text. Default false. */
  allowInsecureHttp?: boolean;
  /** Node: an HTTP or SOCKS5 proxy for the client's own traffic (`socks5://host:port`). */
  proxy?: string;
  /**
   * Node: an OpenTelemetry trace per task (its id, labels, submissions, polls, retries, dead letter; never
   * the key) exported over OTLP/HTTP; `close()` sends the last spans. The browser build refuses it.
   */
  traces?: TraceOptions;
  store?: StoreCallOptions;
  /**
   * Sharing each provider account's limits (submit rate, pauses, in-flight window, account
   * errors) with every client on the same SQLite file or Redis namespace. On by default.
   */
  fleet?: FleetOptions;
  /** Tasks `solveMany`/`solveStream` keep in flight when the call does not say. Default 100. */
  concurrency?: number;
  /** The provider's software id for its developer programme, with one `provider` only; with `providers`
   * it is an error: give each entry its own `softId` (a service's id means nothing to another). */
  softId?: string;
  /** A URL the provider calls when an answer is ready. */
  pingback?: string;
  /**
   * A proxy and a user agent for every task whose kind takes them (a task's own value is kept): the proxy as a URL
   * (`http://login:password@host:port`), `{ server, username, password }` or the task's form. Unknown keys are errors.
   */
  taskDefaults?: { proxy?: PageProxy | false; userAgent?: string };
  /** Webhook alerts: new reasons, dead-letter rate, account errors, budget, circuits, store failures. */
  alerts?: AlertOptions;
  /** DLQ retention by age and/or count, archived before eviction. */
  dlqRetention?: RetentionOptions;
  /** Every event, as it happens. What the callback throws is reported, never passed to the client. */
  onEvent?: (event: CaptchaEvent) => void;
  /**
   * Each answer this client adopted from a dead fleet member (see `FleetOptions.adopt`), once, as
   * `recoverStream()` yields it. Its journal entry goes once the callback returns (or its promise
   * resolves); if it throws or rejects, the answer stays in the journal for `recover()`. Node
   * only in effect: the browser's stores keep no fleet.
   */
  onAdopted?: (item: RecoverItem) => void | Promise<void>;
}

export interface SolveOptions {
  labels?: Labels;
  /** How long you still want the task, in ms: past it, a task not solved is dead-lettered as `TTLExpired` and nothing more is paid for it. */
  ttlMs?: number;
  /** Aborting cancels the task: not sent yet, it is dead-lettered as `Cancelled`; with the provider, it runs on and `recover()` hands its answer over. Rejects with `Aborted`. */
  signal?: AbortSignal;
}

export interface BatchOptions {
  /** Tasks in flight at once (and the in-flight limit is raised to it). Default: the client's `concurrency` (100). */
  concurrency?: number;
  /** Labels for every task (an item's own labels win). */
  labels?: Labels;
  /** Aborting cancels what has not finished (see `SolveOptions.signal`) and rejects with `Aborted`. */
  signal?: AbortSignal;
}

export interface SolveManyOptions extends BatchOptions {
  /** Called with each result as it ends, before `solveMany` resolves (or rejects on abort). */
  onResult?: (result: SolveResult) => void;
}

export interface PageOptions {
  /** Default 0. */
  offset?: number;
  /** Default 100. */
  limit?: number;
}

export interface ExportOptions {
  filter?: Filter;
  /** `json` (one array; the default) or `jsonl` (one record per line). `export(path)`: `jsonl` for `*.jsonl`. */
  format?: 'json' | 'jsonl';
}

export interface DriverStatus {
  /** Tasks accepted and not ended. */
  jobs: number;
  /** Tasks with the provider. */
  inFlight: number;
  inFlightLimit: number;
  /** Tasks running on after their caller cancelled or went away. */
  detached: number;
  /** The account error that stopped submissions, if any. */
  accountFailure: string | null;
  storeDown: boolean;
  /** Store writes asked for and not yet ended (journal entries, answers, dead letters): a task
   * leaves `jobs` when it ends; its dead letter is in the store once this drains. */
  storeWrites: number;
  unreachableEpisodes: number;
  /** Each provider's state, in configuration order. */
  providers: LaneStatus[];
}

export interface LaneStatus {
  name: string;
  baseUrl: string;
  health: 'ready' | 'probing' | 'held' | 'open' | 'unreachable' | 'account_out' | 'unsupported';
  inFlight: number;
  inFlightLimit: number;
  /** Tasks waiting at this provider for a submission slot. */
  queued: number;
  /** The account error that stopped submissions here, if any. */
  accountFailure?: string;
  /** The end of an account hold (RFC 3339), while one lasts. */
  heldUntil?: string;
  unreachableEpisodes: number;
}

export interface StoreHealth {
  available: boolean;
  /** Writes given up after retrying. */
  failures: number;
  lastError: string | null;
}

// ---------------------------------------------------------------- the client

/** The dead-letter queue of a client. */
export declare class Dlq {
  private constructor();
  /** How many records match `filter` (all when omitted). */
  count(filter?: Filter): Promise<number>;
  /** Matching records, oldest first. */
  peek(filter?: Filter, page?: PageOptions): Promise<DeadLetterRecord[]>;
  stats(): Promise<StoreStats>;
  analysis(filter?: Filter): Promise<Analysis>;
  /** The matching records as export text. */
  exportText(options?: ExportOptions): Promise<string>;
  /** Upserts the records of an export (or the seeds' `captcha-dlq.json`); how many. */
  importText(text: string): Promise<number>;
  /** Node only: writes the matching records to `path`, readable by its owner only; how many. */
  export(path: string, options?: ExportOptions): Promise<number>;
  /** Node only: upserts the records of an export file; how many. */
  import(path: string): Promise<number>;
  /** Removes matching records not under a lease; `{}` removes every record (the filter is required). */
  purge(filter: Filter): Promise<number>;
  /** Sets a record aside for review (reason default `'parked by an operator'`); false if there is no such record. */
  park(id: string, reason?: string): Promise<boolean>;
  unpark(id: string): Promise<boolean>;
  /** Tasks in flight, of every client sharing the store. */
  journal(): Promise<JournalEntry[]>;
  /** Task keys settled under `prefix` (default: all). */
  settled(prefix?: string): Promise<SettledKey[]>;
  clearSettled(prefix?: string): Promise<number>;
  /** This DLQ as `name` acts on it: its actions are recorded in the audit trail under that name (default `'api'`). */
  asOperator(name: string): Dlq;
  /** The audit trail, newest first; `before`: only entries older than that id. */
  audit(options?: { limit?: number; before?: number }): Promise<AuditEntry[]>;
}

/** A solving client. Every method is async and never blocks the event loop. */
/**
 * Checks a webhook request's `X-Captcha-Dlq-Signature` header against its raw body (the bytes
 * received, before any JSON parsing) with the webhook's `secret`, in Rust: `true`, or throws an
 * `Error` whose `code` is `'WEBHOOK_SIGNATURE'` and whose message says why (a malformed header,
 * a time more than `toleranceS` seconds from now — default 300 —, a signature not matching).
 */
export declare function verifyWebhook(
  body: Uint8Array | string,
  header: string,
  secret: string,
  toleranceS?: number,
): true;

export declare class Client {
  /** Starts the client; a problem with the options or the store rejects `ready()` and every call. */
  constructor(options: ClientOptions);
  readonly dlq: Dlq;
  /** Resolves once the client runs; rejects with what stopped it. */
  ready(): Promise<void>;
  /** Solves one task. Rejects with `SolveFailed` (its record is in the DLQ), `AccountError`, `InvalidTask`, `Aborted`… */
  solve(task: Task, options?: SolveOptions): Promise<Solution>;
  /** Results as they end; never more than `concurrency` tasks ahead of the consumer. Leaving the loop early cancels the rest. */
  solveStream(tasks: BatchItem[], options?: BatchOptions): AsyncGenerator<SolveResult, void, undefined>;
  /** One result per task, in input order. On abort, rejects with `Aborted` whose `partial` holds the results delivered. */
  solveMany(tasks: BatchItem[], options?: SolveManyOptions): Promise<SolveResult[]>;
  /** Replays records, yielding each outcome with its solution. Without `reasons`/`ids`/`filter`: the policy's `autoClasses`. */
  replayStream(options?: ReplayOptions): ReplayStream;
  replay(options?: ReplayOptions): Promise<ReplayResult>;
  /** Finishes what a dead client (or a cancelled caller) left in the journal, yielding each task as it ends. */
  recoverStream(options?: RecoverOptions): RecoverStream;
  recover(options?: RecoverOptions): Promise<RecoverResult>;
  /** The account balance. */
  balance(): Promise<number>;
  /** Tells the provider whether an answer was right (refunds, solver quality). */
  report(providerTaskId: string, good: boolean): Promise<void>;
  /** The balance at the provider named `name`. */
  balanceOf(name: string): Promise<number>;
  /** Every provider's balance, in configuration order. */
  balances(): Promise<Array<{ provider: string; balance: number } | { provider: string; error: CaptchaDlqError }>>;
  /** Tells the provider that solved `solution` whether it was right. */
  reportSolution(solution: Solution, good: boolean): Promise<void>;
  /** Spend since the client started, by provider, kind and label. */
  spend(): Promise<Record<string, unknown>>;
  /** Counters and gauges by provider (tasks, HTTP exchanges, circuits). */
  metrics(): Promise<Record<string, unknown>>;
  /** Metrics and DLQ gauges in the Prometheus text format (alerts sent, records evicted included). */
  metricsText(): Promise<string>;
  /** Node only: serves the operator dashboard over this client's DLQ. */
  serveDashboard(options?: DashboardOptions): Promise<DashboardServer>;
  /** Lets submissions flow again after an account error was fixed. */
  resetCircuit(): Promise<void>;
  status(): Promise<DriverStatus>;
  /** Resolves once every store write asked for so far has ended (dead letters, journal entries,
   * the removals taken answers ask for): a read of the DLQ after it sees them. */
  flush(): Promise<void>;
  storeHealth(): Promise<StoreHealth>;
  /** Stops once queued writes are done; tasks in flight stay in the journal for `recover()`. */
  close(): Promise<void>;
  toJSON(): { provider?: string; baseUrl?: string; opening?: true; closed: boolean };
}

// ---------------------------------------------------------------- errors

export type ErrorCode =
  | 'SOLVE_FAILED'
  | 'ACCOUNT_ERROR'
  | 'INVALID_TASK'
  | 'INVALID_CONFIG'
  | 'STORE_ERROR'
  | 'PROVIDER_ERROR'
  | 'CANCELLED'
  | 'CLOSED'
  | 'ABORTED'
  | 'IO_ERROR';

/** Base of every error the package throws. */
export declare class CaptchaDlqError extends Error {
  /** Stable across versions and languages. */
  readonly code: ErrorCode;
  /** The offending field, as you wrote it (`options.limt`, `tasks[3].sitekey`). */
  readonly field?: string;
}
/** The task could not be solved. */
export declare class SolveFailed extends CaptchaDlqError {
  readonly code: 'SOLVE_FAILED';
  readonly record: DeadLetterRecord;
  /** The record is in the DLQ; `false`: the store could not take it and this is the only copy. */
  readonly stored: boolean;
}
/** The account (key, balance, IP) is the problem, not the task. */
export declare class AccountError extends CaptchaDlqError {
  readonly code: 'ACCOUNT_ERROR';
  /** When a solve failed. */
  readonly record?: DeadLetterRecord;
  readonly stored?: boolean;
}
export declare class InvalidTask extends CaptchaDlqError {
  readonly code: 'INVALID_TASK';
  readonly field: string;
}
export declare class InvalidConfig extends CaptchaDlqError {
  readonly code: 'INVALID_CONFIG';
  readonly field: string;
}
export declare class StoreError extends CaptchaDlqError {
  readonly code: 'STORE_ERROR';
}
/** A direct request to the provider (balance, report) failed. */
export declare class ProviderError extends CaptchaDlqError {
  readonly code: 'PROVIDER_ERROR';
}
export declare class Cancelled extends CaptchaDlqError {
  readonly code: 'CANCELLED';
  readonly id: string;
  /** The provider had the task: it runs on and `recover()` hands its answer over. */
  readonly runsOn: boolean;
}
export declare class Closed extends CaptchaDlqError {
  readonly code: 'CLOSED';
}
/** An AbortSignal stopped the call; `cause` is the signal's reason. */
export declare class Aborted extends CaptchaDlqError {
  readonly code: 'ABORTED';
  /** The provider had the task: it runs on and `recover()` hands its answer over. */
  readonly runsOn: boolean;
  /** When the task was dead-lettered as `Cancelled` before it was sent. */
  readonly record?: DeadLetterRecord;
  /** `solveMany`: the results delivered before the abort (by input index). */
  partial?: SolveResult[];
}

// ---------------------------------------------------------------- page outcomes (captcha-dlq/page)

/** What became of an answer on a page, as `captcha-dlq/page` (or your own page code) reports it. */
export interface PageOutcome {
  /** `accepted`/`rejected`: the site's verdict (metrics; a rejection is reported and dead-lettered as `RejectedBySite`); `gone`: the page was gone when the answer came (dead-lettered as `PageGone`, the answer in its labels). */
  verdict: 'accepted' | 'rejected' | 'gone';
  /** The task that was solved. */
  task: Task | (Record<string, unknown> & { type: string });
  /** The answer, as `solve` returned it. */
  solution: Solution;
  /** The page's host, a metrics label. */
  host?: string;
  /** Why (the check's detail, what was gone). */
  detail?: string;
  labels?: Labels;
}

export interface PageOutcomeRecorded {
  /** The id of the dead-letter record written, if any. */
  recorded: string | null;
  /** Whether the provider took the bad-answer report (`null`: none was due). */
  reported: boolean | null;
  reportError?: string;
}

/** A proxy as a browser or a user gives it: a URL (`http://login:password@host:port`), Playwright's `{ server, username, password }`, or the task's form. */
export type PageProxy = string | { server: string; username?: string; password?: string; bypass?: string } | { type: string; host: string; port: number; login?: string; password?: string };

export interface PageTaskArgs {
  /** The task the detector read from the page. */
  task: Record<string, unknown> & { type: string };
  /** The browser's proxy, as the driver shows it. */
  browserProxy?: PageProxy | null;
  /** The caller's: `false` none, else it replaces the browser's. */
  proxy?: PageProxy | false;
  userAgent?: string;
  /** The frame's cookies: `[{ name, value }]` or `a=1; b=2`. */
  cookies?: Array<{ name: string; value: string }> | string;
}

export interface PageTaskMade {
  /** The task to solve (the kind's name, the browser's values where the kind takes them); it holds secrets. */
  task: Record<string, unknown> & { type: string };
  /** The fields filled from the browser. */
  filled: Array<'proxy' | 'user_agent' | 'cookies'>;
  /** `task` as results show it: the proxy as `type://host:port`, the cookies as `***`. */
  shown: Record<string, unknown> & { type: string };
}

export interface PageAnswerApplied {
  /** Cookies to write into the browser (none: the detector injects the answer). */
  cookies: Array<{ name: string; value: string; url: string }>;
  /** Load the page again once they are set. */
  reload: boolean;
  /** For an answer injected into a widget: when to solve it again if the page has not used it by then (Unix ms;
   * from the kind's declared life); null for cookie answers and answers that do not expire. */
  renewAt: number | null;
}

export declare interface Dlq {
  /** Records what became of an answer on a page (see `PageOutcome`). */
  recordPageOutcome(outcome: PageOutcome): Promise<PageOutcomeRecorded>;
  /** The task a widget found on a page becomes (see `PageTaskArgs`). */
  pageTask(args: PageTaskArgs): Promise<PageTaskMade>;
  /** How an answer is applied to the page at `url`: cookies to set and whether to reload. */
  pageAnswer(args: { task: Record<string, unknown> & { type: string }; solution: Solution; url: string }): Promise<PageAnswerApplied>;
}

/**
 * Changes to the records `dlq.edit` selects: `task` is a JSON merge patch (RFC 7396) on the task, field names as
 * records show them (`sitekey`, `page_url`): a value sets a field, `null` removes it. `labels`: a string sets a label,
 * `null` removes it. `preview: true` writes nothing.
 */
export interface EditChanges {
  task?: Record<string, unknown>;
  labels?: Record<string, string | null>;
  preview?: boolean;
}

/** One changed value: a dotted path (`task.sitekey`, `labels.env`), its value before and after (`null`: absent). */
export interface EditChange {
  path: string;
  before: unknown;
  after: unknown;
}

/** What `dlq.edit` did (with `preview`: would do). */
export interface EditReport {
  preview: boolean;
  matched: number;
  changed: number;
  unchanged: number;
  /** Records not edited, with why (under a lease, being replayed, or the new task would be invalid). */
  refused: { id: string; error: string }[];
  diffs: { id: string; changes: EditChange[] }[];
}

export declare interface Dlq {
  /**
   * Edits the records `filter` selects (required; `{}` for every record); the core checks each new task as a new
   * task. Replay the edited ones afterwards with `client.replay({ ids: report.diffs.map((d) => d.id) })`.
   */
  edit(filter: Filter, changes: EditChanges): Promise<EditReport>;
}
