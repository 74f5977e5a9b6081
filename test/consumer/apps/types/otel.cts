import { TracewireInstrumentation } from 'tracewire/instrumentation';

export const instrumentation = new TracewireInstrumentation();
