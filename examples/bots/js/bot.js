#!/usr/bin/env node
// A simple Shuangkou bot for node speaking `shuangkou-bot/1` (docs/protocol.md); no packages.
//
//   shuangkou play --bot jsbot='node examples/bots/js/bot.js' --seats jsbot,greedy
//
// Policy: a legal choice at random (shows and passes alike), from a small generator seeded
// with each deal's `bot_seed`, so that a run replays exactly.
'use strict';
const readline = require('readline');

let state = 1;
function seed(n) {
  // bot_seed may exceed 2^53 (a double loses its low bits): fold what survives into 32 bits
  const x = Number(n) || 0;
  state = ((x % 4294967296) ^ Math.floor(x / 4294967296)) >>> 0 || 1;
}
function next() {  // mulberry32
  state = (state + 0x6D2B79F5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    process.stderr.write('jsbot: unreadable line\n');
    return;
  }
  switch (msg.type) {
    case 'hello':
      send({ type: 'hello', name: 'jsbot', version: '1' });
      break;
    case 'deal':
      seed(msg.bot_seed);
      break;
    case 'decide': {
      const legal = msg.legal || [];
      const choice = Math.floor(next() * legal.length);
      send({ type: 'action', id: msg.id, choice: choice });
      break;
    }
    case 'quit':
      rl.close();
      process.exit(0);
  }
});
rl.on('close', () => process.exit(0));
