/** The admin token the user signed in with: session storage only, so it ends with the tab. */
const TOKEN_KEY = "agw.adminToken";

export const getToken = (): string | null => sessionStorage.getItem(TOKEN_KEY);
export const setToken = (t: string) => sessionStorage.setItem(TOKEN_KEY, t);
export const dropToken = () => sessionStorage.removeItem(TOKEN_KEY);
