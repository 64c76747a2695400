import { useCallback, useEffect, useState } from "react";
import { api, clearToken, getToken, onUnauthenticated, type Account } from "./api";
import { Shell } from "./components/Shell";
import { useHashRoute } from "./hooks/useHashRoute";
import { pageFor } from "./pages/routes";
import { SignInPage } from "./pages/SignInPage";

/** Sign-in state and the account shown in the top bar; everything else is a page. */
export function App() {
  const [token, setTok] = useState(getToken);
  const [account, setAccount] = useState<Account>();
  const parts = useHashRoute();
  const signOut = useCallback(() => {
    clearToken();
    setTok(null);
    setAccount(undefined);
  }, []);
  useEffect(() => onUnauthenticated(signOut), [signOut]);

  const refreshAccount = useCallback(async () => {
    try {
      setAccount(await api.me());
    } catch {
      /* shown where it matters; 401 signs out */
    }
  }, []);
  useEffect(() => {
    if (!token) return;
    void refreshAccount();
    const t = setInterval(refreshAccount, 15_000);
    return () => clearInterval(t);
  }, [token, refreshAccount]);

  if (!token) return <SignInPage onSignedIn={(t, a) => (setTok(t), setAccount(a))} />;
  return (
    <Shell section={parts[0]} routeKey={parts.join("/")} account={account} onSignOut={signOut}>
      {pageFor(parts, refreshAccount)}
    </Shell>
  );
}
