export function NotFoundPage() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no page here. <a href="#/agents">Go to agents</a>.
      </p>
    </section>
  );
}
