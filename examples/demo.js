// Placeholder demo until the full demo lands (issue 5): shows the errors component.
import { errors } from 'tracewire';

const error = errors.unauthorized('Token expired', 'Bearer', { realm: 'api' });
console.log(error.output.statusCode, error.output.headers, error.output.payload);
