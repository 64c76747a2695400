import { AppError } from "../errors/app-error.js";
import { decodeCursor } from "../graphql/cursor.js";

/** The largest page ListTasks and ListTaskPushNotificationConfigs return. */
export const MAX_PAGE = 100;

export function checkPageSize(size: number): void {
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) throw new AppError("validation_failed", `pageSize must be between 1 and ${MAX_PAGE}`, { param: "pageSize" });
}

/** A list's `pageToken`: the keyset position (time in µs, id) of the previous page's last item. */
export function pagePosition(pageToken: string | undefined): readonly [number, string] | undefined {
  try {
    return pageToken ? decodeCursor(pageToken, ["number", "string"] as const) : undefined;
  } catch {
    throw new AppError("validation_failed", "pageToken is not a nextPageToken of this list", { param: "pageToken" });
  }
}
