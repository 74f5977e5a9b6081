const { client } = require('tracewire');
const { instrumentClient } = require('tracewire/instrumentation');
const { run } = require('./calls.cjs');

run({ client, instrumentClient }).catch((err) => {
    console.error(err);
    process.exitCode = 1;
});
