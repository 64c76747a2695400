// One list of supported models for the server and the console.
export { SUPPORTED_MODELS as MODELS, DEFAULT_MODEL } from "../../../src/config/models";
export const MAX_PAYLOAD_BYTES = 1_048_576;
