import { type FakeTriton, fakeScript } from '@trtllm/testing';
import { expect, it } from 'vitest';
import { pathsThroughGateway } from './gateway.js';

/** The server settings of the front ends with `grpcUrl` / `httpUrl` (the AI SDK provider, LangChain). */
export type AddressSettings = { readonly grpcUrl: string } | { readonly httpUrl: string };

/**
 * The address rules a front end's `grpcUrl` / `httpUrl` follow, as tests inside the caller's
 * `describe`: `answer` sends the prompt it is given to the `ensemble` model through a client made
 * from the settings and resolves with the reply's text. Each address must reach the fake over the
 * protocol its setting names, and an HTTP path prefix must survive a gateway.
 */
export function itFollowsTheAddressRules(
  fake: () => FakeTriton,
  answer: (settings: AddressSettings, prompt: string) => Promise<string>,
): void {
  const prompt = `Hi ${fakeScript('reached')}`;
  const received = () =>
    fake()
      .events()
      .filter((e) => e.event === 'received' && e.model === 'ensemble');
  const host = () => new URL(fake().grpcUrl).host;

  it.each([
    ['grpcUrl http://host:port', 'grpc', () => ({ grpcUrl: fake().grpcUrl })],
    ['grpcUrl grpc://host:port', 'grpc', () => ({ grpcUrl: fake().grpcUrl.replace(/^http:/, 'grpc:') })],
    ['grpcUrl dns:host:port', 'grpc', () => ({ grpcUrl: `dns:${host()}` })],
    ['grpcUrl dns:///host:port', 'grpc', () => ({ grpcUrl: `dns:///${host()}` })],
    ['httpUrl http://host:port', 'http', () => ({ httpUrl: fake().httpUrl })],
  ])('%s speaks %s', async (_, protocol, settings) => {
    const before = received().length;
    expect(await answer(settings(), prompt)).toBe('reached');
    expect(
      received()
        .slice(before)
        .map((e) => e.protocol),
    ).toEqual([protocol]);
  });

  it('httpUrl keeps its path prefix behind a gateway', async () => {
    const paths = await pathsThroughGateway(fake().httpUrl, async (httpUrl) => {
      expect(await answer({ httpUrl }, prompt)).toBe('reached');
    });
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith('/triton/v2/'))).toBe(true);
  });
}
