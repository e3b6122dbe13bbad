"use strict";
// node run.js BOT --socket PATH: serve the bot at BOT (its entry file) on the unix socket PATH.
const code = require("./saloon/runtime").main(process.argv.slice(2));
if (code !== null) process.exitCode = code;
