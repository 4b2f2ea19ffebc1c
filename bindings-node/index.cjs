// captcha-dlq for Node.js (CommonJS entry): the ES module index.js itself, loaded with
// require(), which Node supports for ES modules from 20.19 and 22.12 on. One module
// instance serves both entries, so `instanceof` works across them.
'use strict';

module.exports = require('./index.js');
