import { closeSocket } from "./socket";
import { dropToken } from "./token";

/** Signing out forgets the token and closes the live connection that was opened with it. */
export function clearToken(): void {
  dropToken();
  closeSocket();
}
